// One OpenTelemetry span per admission or conversion review, a child of the API server's
// span when its request carries W3C trace context (kube-apiserver's APIServerTracing sends
// `traceparent` to webhooks) and a propagator is registered. The handler runs with the span
// active, so what it calls (the KubeClient's requests) becomes the span's children.
import type * as OpenTelemetry from '@opentelemetry/api';
import type { Attributes, Span, Tracer, TracerProvider } from '@opentelemetry/api';
import type { IncomingHttpHeaders } from 'node:http';
import { createRequire } from 'node:module';

type GlobalProvider = TracerProvider & { getDelegateTracer?: (name: string) => Tracer | undefined };

let provider: GlobalProvider | undefined;
let api: typeof OpenTelemetry | undefined;
const REGISTERED = Symbol.for('opentelemetry.js.api.1');

/**
 * The API once an SDK registered a tracer provider, loaded then, as client/tracing-api.ts
 * loads it (webhooks/ imports no other folder, docs/ARCHITECTURE.md).
 */
function tracingApi(): typeof OpenTelemetry | undefined {
  if (!api && (globalThis as { [REGISTERED]?: { trace?: unknown } })[REGISTERED]?.trace)
    api = createRequire(import.meta.url)('@opentelemetry/api') as typeof OpenTelemetry;
  return api;
}

/** The operator's tracer, or undefined while no SDK is registered, read as client/request-span.ts reads it. */
function activeTracer(): Tracer | undefined {
  if (!provider) {
    const loaded = tracingApi();
    if (!loaded) return undefined;
    provider = loaded.trace.getTracerProvider() as GlobalProvider;
  }
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
  const { context, propagation, SpanKind, SpanStatusCode, trace } = tracingApi()!; // loaded: there is a tracer
  const parent = propagation.extract(context.active(), headers);
  const conversion = field(review, 'kind') === 'ConversionReview';
  const span = tracer.startSpan(
    `${conversion ? 'conversion' : 'admission'} ${path}`,
    { kind: SpanKind.SERVER, attributes: { 'url.path': path, ...requestAttributes(review, conversion) } },
    parent,
  );
  try {
    const answered = await context.with(trace.setSpan(parent, span), answer);
    recordAnswer(span, answered);
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

/** What a review's answer says: refused or not, with what code and message. */
export interface ReviewVerdict {
  conversion: boolean;
  /** Admission allowed=false, or a conversion answered Failure. */
  refused: boolean;
  /** A denial's status code; 500 for a handler that threw and for a failed conversion. */
  code?: number;
  message?: string;
}

/** The verdict of an answer a route returned (an AdmissionReview or a ConversionReview). */
export function reviewVerdict(answered: unknown): ReviewVerdict {
  const response = field(answered, 'response');
  const result = field(response, 'result');
  if (field(answered, 'kind') === 'ConversionReview' || result !== undefined) {
    const failed = field(result, 'status') === 'Failure';
    const message = field(result, 'message');
    return {
      conversion: true,
      refused: failed,
      ...(failed ? { code: 500 } : {}),
      ...(typeof message === 'string' ? { message } : {}),
    };
  }
  const status = field(response, 'status');
  const code = field(status, 'code');
  const message = field(status, 'message');
  return {
    conversion: false,
    refused: field(response, 'allowed') === false,
    ...(typeof code === 'number' ? { code } : {}),
    ...(typeof message === 'string' ? { message } : {}),
  };
}

/**
 * The verdict: `nestor.admission.allowed` and a denial's code (a denial is the webhook's
 * answer, not its failure; a 500 denial means the handler threw, and is an error), or the
 * conversion's `nestor.conversion.result` (a Failure is an error).
 */
function recordAnswer(span: Span, answered: unknown): void {
  const verdict = reviewVerdict(answered);
  if (verdict.conversion) span.setAttribute('nestor.conversion.result', verdict.refused ? 'Failure' : 'Success');
  else span.setAttribute('nestor.admission.allowed', !verdict.refused);
  if (!verdict.conversion && verdict.code !== undefined) span.setAttribute('nestor.admission.code', verdict.code);
  if (verdict.refused && verdict.code === 500) {
    span.setStatus({
      code: tracingApi()!.SpanStatusCode.ERROR,
      ...(verdict.message !== undefined ? { message: verdict.message } : {}),
    });
  }
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}
