// One OpenTelemetry span per reconcile, made by the loop that runs it, so it knows how the
// run ended (the outcome the metrics count) and every controller has it, with Nest or without.
import type { Span } from '@opentelemetry/api';
import { DEFAULT_CLUSTER_NAME, type ObjectRef } from '@nestor/core';
import { activeTracer } from '../../client/request-span.js';
import { tracingApi } from '../../client/tracing-api.js';
import type { ReconcileResult } from './result.js';

/** What names one run in its span. */
export interface ReconcileSpanFields {
  controller: string;
  /** The controller's primary kind; absent for a controller fed by sources only. */
  kind: string | undefined;
  ref: ObjectRef;
  reconcileId: string;
  attempt: number;
  /** The cluster of the run: an attribute when it is a fleet's member (not the manager's own). */
  cluster?: string;
}

/**
 * The run's span, `reconcile <controller>`, or undefined while no SDK is registered: then
 * a reconcile makes no span, no context and no attributes.
 */
export function startReconcileSpan(fields: ReconcileSpanFields): Span | undefined {
  const tracer = activeTracer();
  if (!tracer) return undefined;
  return tracer.startSpan(`reconcile ${fields.controller}`, {
    attributes: {
      'nestor.controller': fields.controller,
      ...(fields.kind ? { 'nestor.kind': fields.kind } : {}),
      'k8s.namespace.name': fields.ref.namespace ?? '',
      'nestor.object.name': fields.ref.name,
      'nestor.reconcile_id': fields.reconcileId,
      'nestor.attempt': fields.attempt,
      ...(fields.cluster && fields.cluster !== DEFAULT_CLUSTER_NAME ? { 'k8s.cluster.name': fields.cluster } : {}),
    },
  });
}

/** Runs the reconcile with its span active: the client's request spans become its children. */
export function inReconcileSpan<R>(span: Span | undefined, run: () => R): R {
  if (!span) return run();
  const { context, trace } = tracingApi()!; // loaded: the span was made with it
  return context.with(trace.setSpan(context.active(), span), run);
}

/**
 * Ends the span with how the run ended: `nestor.result` (controller-runtime's result label:
 * success, requeue, requeue_after, error, terminal_error, timeout; or fenced), `nestor.requeue` (queued to
 * run again without a change of the object: asked, or retried after an error), `nestor.requeue_after_ms`, and the error.
 */
export function endReconcileSpan(
  span: Span,
  /** The loop's ReconcileOutcome. */
  outcome: string,
  result: ReconcileResult | undefined,
  error: Error | undefined,
  requeued: boolean,
): void {
  span.setAttribute('nestor.result', outcome);
  span.setAttribute('nestor.requeue', requeued);
  if (outcome === 'requeue_after' && result?.requeueAfter !== undefined) {
    span.setAttribute('nestor.requeue_after_ms', result.requeueAfter);
  }
  if (error) {
    span.recordException(error);
    span.setAttribute('error.type', error.name);
    span.setStatus({ code: tracingApi()!.SpanStatusCode.ERROR, message: error.message });
  }
  span.end();
}
