// One OpenTelemetry span per admission or conversion review, a child of the API server's
// span when its request carries W3C trace context (kube-apiserver's APIServerTracing sends
// `traceparent` to webhooks) and a propagator is registered. The handler runs with the span
// active, so what it calls (the KubeClient's requests) becomes the span's children.
import {
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * The operator's tracer, or undefined while no SDK is registered (as client/request-span.ts;
 * webhooks/ imports no other folder of the package, docs/ARCHITECTURE.md).
 */
function activeTracer(): Tracer | undefined {
  const provider = trace.getTracerProvider() as TracerProvider & {
    getDelegateTracer?: (name: string) => Tracer | undefined;
  };
  return provider.getDelegateTracer ? provider.getDelegateTracer(TRACER) : provider.getTracer(TRACER);
}

const TRACER = '@nestor/operator';

/**
 * Answers the review at `path` inside a span (`admission <path>` or `conversion <path>`)
 * when an SDK is registered, with what a user filters on: the review's kind, operation,
 * object, the verdict (allowed, denial code) or the conversion's result. Without an SDK,
 * `answer` is called alone.
 */
export function inReviewSpan<R>(
  path: string,
  headers: IncomingHttpHeaders,
  review: unknown,
  answer: () => Promise<R>,
): Promise<R> {
  const tracer = activeTracer();
  return tracer ? traced(tracer, path, headers, review, answer) : answer();
}

async function traced<R>(
  tracer: Tracer,
  path: string,
  headers: IncomingHttpHeaders,
  review: unknown,
  answer: () => Promise<R>,
): Promise<R> {
  const parent = propagation.extract(context.active(), headers);
  const conversion = field(review, 'kind') === 'ConversionReview';
  const span = tracer.startSpan(
    `${conversion ? 'conversion' : 'admission'} ${path}`,
    { kind: SpanKind.SERVER, attributes: { 'url.path': path, ...requestAttributes(review, conversion) } },
    parent,
  );
  try {
    const answered = await context.with(trace.setSpan(parent, span), answer);
    recordAnswer(span, answered, conversion);
    return answered;
  } catch (error) {
    const failure = error instanceof Error ? error : new Error(String(error));
    span.recordException(failure);
    span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
    throw error;
  } finally {
    span.end();
  }
}

/** The request's fields, read without trusting the review (the route checks it). */
function requestAttributes(review: unknown, conversion: boolean): Attributes {
  const request = field(review, 'request');
  const attributes: Attributes = {};
  const uid = field(request, 'uid');
  if (typeof uid === 'string') attributes['nestor.review.uid'] = uid;
  if (conversion) {
    const desired = field(request, 'desiredAPIVersion');
    const objects = field(request, 'objects');
    if (typeof desired === 'string') attributes['nestor.conversion.desired_api_version'] = desired;
    if (Array.isArray(objects)) {
      attributes['nestor.conversion.objects'] = objects.length;
      const kind = field(objects[0], 'kind');
      if (typeof kind === 'string') attributes['nestor.kind'] = kind;
    }
    return attributes;
  }
  const strings: Array<[string, unknown]> = [
    ['nestor.kind', field(field(request, 'kind'), 'kind')],
    ['nestor.admission.operation', field(request, 'operation')],
    ['k8s.namespace.name', field(request, 'namespace')],
    ['nestor.object.name', field(request, 'name')],
  ];
  for (const [key, value] of strings) if (typeof value === 'string' && value) attributes[key] = value;
  if (field(request, 'dryRun') === true) attributes['nestor.admission.dry_run'] = true;
  return attributes;
}

/**
 * The verdict: `nestor.admission.allowed` and a denial's code (a denial is the webhook's
 * answer, not its failure; a 500 denial means the handler threw, and is an error), or the
 * conversion's `nestor.conversion.result` (a Failure is an error).
 */
function recordAnswer(span: Span, answered: unknown, conversion: boolean): void {
  const response = field(answered, 'response');
  if (conversion) {
    const result = field(response, 'result');
    const status = field(result, 'status');
    if (typeof status === 'string') span.setAttribute('nestor.conversion.result', status);
    if (status === 'Failure') {
      const message = field(result, 'message');
      span.setStatus({ code: SpanStatusCode.ERROR, ...(typeof message === 'string' ? { message } : {}) });
    }
    return;
  }
  const allowed = field(response, 'allowed');
  if (typeof allowed === 'boolean') span.setAttribute('nestor.admission.allowed', allowed);
  const status = field(response, 'status');
  const code = field(status, 'code');
  if (typeof code === 'number') span.setAttribute('nestor.admission.code', code);
  if (allowed === false && code === 500) {
    const message = field(status, 'message');
    span.setStatus({ code: SpanStatusCode.ERROR, ...(typeof message === 'string' ? { message } : {}) });
  }
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}
