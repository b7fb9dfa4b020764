// OpenTelemetry spans of the client's requests to the API server. The package depends on
// @opentelemetry/api alone: the application registers an SDK (docs/production.md), and
// until it does no span is made at all, nor the API loaded (tracing-api.ts).
import type { Tracer, TracerProvider } from '@opentelemetry/api';
import { KubeApiError, resourceName, type ResourceDescriptor } from '@nestor/core';
import { tracingApi } from './tracing-api.js';

/** The instrumentation scope of every span Nestor makes. */
export const TRACER_NAME = '@nestor/operator';

type GlobalProvider = TracerProvider & { getDelegateTracer?: (name: string) => Tracer | undefined };

/**
 * The global tracer provider, read once, as the API's own tracers are bound to it
 * (`trace.getTracer`): a proxy whose delegate becomes the SDK's provider when one is
 * registered, before or after this is read. Only `trace.disable()` replaces the proxy.
 */
let provider: GlobalProvider | undefined;

/**
 * The operator's tracer, or undefined while no SDK is registered: then a reconcile or a
 * request pays one property read, where a no-op span would still cost a span, a context
 * and a closure per call (measured in docs/BENCHMARKS.md, "Tracing off").
 */
export function activeTracer(): Tracer | undefined {
  if (!provider) {
    const api = tracingApi();
    if (!api) return undefined;
    provider = api.trace.getTracerProvider() as GlobalProvider;
  }
  // Another copy of @opentelemetry/api may have registered the provider: then ask it as any provider.
  return provider.getDelegateTracer ? provider.getDelegateTracer(TRACER_NAME) : provider.getTracer(TRACER_NAME);
}

/** The API server's verbs, as its audit log and apiserver_request_total name them. */
export type KubeVerb = 'get' | 'list' | 'create' | 'update' | 'patch' | 'delete';

/** What one client call asks of the API server, as its span describes it. */
export interface KubeRequest {
  verb: KubeVerb;
  resource: ResourceDescriptor;
  namespace?: string | undefined;
  name?: string | undefined;
  subresource?: string | undefined;
  /** The patch's format (merge, json, strategic, apply) for a patch. */
  patchType?: string | undefined;
  /** A 404 is an answer, not a failure (get of an object that may be gone, delete). */
  absentIsAnswer?: boolean;
}

/**
 * Runs `send` inside a client span named `<verb> <resource>` (`patch deployments.apps`)
 * when an SDK is registered: the verb, the resource, the object, the HTTP method and the
 * answer's status code, an error status when the call failed. `send` is handed what
 * records the status; without an SDK it is called alone, as if there were no tracing.
 */
export function traced<T>(
  request: KubeRequest,
  method: string,
  send: (onStatus?: (status: number) => void) => Promise<T>,
): Promise<T> {
  const tracer = activeTracer();
  return tracer ? inSpan(tracer, request, method, send) : send();
}

async function inSpan<T>(
  tracer: Tracer,
  request: KubeRequest,
  method: string,
  send: (onStatus: (status: number) => void) => Promise<T>,
): Promise<T> {
  const { context, SpanKind, SpanStatusCode, trace } = tracingApi()!; // loaded: there is a tracer
  const { verb, resource, namespace, name, subresource, patchType } = request;
  const span = tracer.startSpan(`${verb} ${resourceName(resource)}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      'nestor.kube.verb': verb,
      'nestor.kube.resource': resourceName(resource),
      'nestor.kube.kind': resource.kind,
      'http.request.method': method,
      ...(namespace ? { 'k8s.namespace.name': namespace } : {}),
      ...(name ? { 'nestor.object.name': name } : {}),
      ...(subresource ? { 'nestor.kube.subresource': subresource } : {}),
      ...(patchType ? { 'nestor.kube.patch_type': patchType } : {}),
    },
  });
  const onStatus = (status: number) => span.setAttribute('http.response.status_code', status);
  try {
    return await context.with(trace.setSpan(context.active(), span), () => send(onStatus));
  } catch (error) {
    const status = error instanceof KubeApiError ? error.status : 0;
    if (status > 0) onStatus(status);
    if (!(status === 404 && request.absentIsAnswer)) {
      const failure = error instanceof Error ? error : new Error(String(error));
      span.recordException(failure);
      span.setAttribute('error.type', status > 0 ? String(status) : failure.name);
      span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
    }
    throw error;
  } finally {
    span.end();
  }
}
