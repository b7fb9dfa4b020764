// The validating rule every webhook peer enforces on the benchmark's Widget (the Go peer's
// WidgetValidator in bench/controller-runtime/webhook.go is the same): a size quota, a
// warning above half of it, and a round that never goes back.
export const MAX_SIZE = 100;
export const WARN_SIZE = 50;

/** The handlers, given the AdmissionDenied class of the build under test (instanceof is checked). */
export function widgetRule(AdmissionDenied) {
  const checkSize = (widget) => {
    const size = widget.spec?.size ?? 0;
    if (size > MAX_SIZE) {
      throw new AdmissionDenied(`spec.size ${size} exceeds the quota of ${MAX_SIZE}`, { code: 422, reason: 'Invalid' });
    }
    return size > WARN_SIZE ? [`spec.size ${size} is more than half the quota`] : [];
  };
  return {
    create: (widget) => checkSize(widget),
    update: (widget, old) => {
      const round = widget.spec?.round ?? 0;
      const before = old.spec?.round ?? 0;
      if (round < before) {
        throw new AdmissionDenied(`spec.round may not go back from ${before} to ${round}`, {
          code: 422,
          reason: 'Invalid',
        });
      }
      return checkSize(widget);
    },
  };
}

/** The path controller-runtime's builder generates for bench.nestor.dev/v1 Widget (Nestor's webhookPath too). */
export const VALIDATE_PATH = '/validate-bench-nestor-dev-v1-widget';
