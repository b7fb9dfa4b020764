import { SpanStatusCode, trace } from '@opentelemetry/api';
import type { Reconciler } from '../reconciler.js';
import { toError } from '../result.js';

/**
 * One OpenTelemetry span per reconcile, named `reconcile <controller>`, with the request's
 * attributes and the error it threw. A no-op unless the application installs an SDK.
 */
export function withTracing<T>(controller: string, reconcile: Reconciler<T>): Reconciler<T> {
  const tracer = trace.getTracer('@nestor/operator');
  return (request) =>
    tracer.startActiveSpan(
      `reconcile ${controller}`,
      {
        attributes: {
          'nestor.controller': controller,
          'nestor.reconcile_id': request.reconcileId,
          'nestor.attempt': request.attempt,
          'k8s.namespace.name': request.ref.namespace ?? '',
          'nestor.object.name': request.ref.name,
        },
      },
      async (span) => {
        try {
          return await reconcile(request);
        } catch (error) {
          const failure = toError(error);
          span.recordException(failure);
          span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
          throw error;
        } finally {
          span.end();
        }
      },
    );
}
