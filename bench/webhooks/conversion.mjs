// The Nestor side of the conversion case (the two-version Widget of
// conversion.bench.nestor.dev: v1 the hub with spec.size, v2 with spec.replicas; the Go peer's
// WidgetV1/WidgetV2 in bench/controller-runtime/webhook.go). HOOK: filled in once Nestor's
// conversion API is merged (branch conversion-webhooks); until then the Nestor peers serve no
// /convert and the conversion scenario runs the Go peer alone.

/** Whether this build has Nestor's conversion API (the peers then serve /convert). */
export async function conversionAvailable() {
  return false;
}

/** A route for the plain server: (body, res) => void, or undefined when not available. */
export async function conversionRoute() {
  return undefined;
}

/** Providers for the Nest peer's module (a converter class), or none. */
export async function conversionProviders() {
  return [];
}
