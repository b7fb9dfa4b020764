// The OpenTelemetry SDK as an application registers it (a context manager, the W3C
// propagator, a tracer provider), its spans kept in memory for a test to read. The SDK
// packages are root devDependencies: the operator package depends on @opentelemetry/api alone.
import { context, propagation, trace, type SpanContext } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';

export interface SpanRecorder {
  /** Every span ended so far. */
  spans(): ReadableSpan[];
  /**
   * Shuts the provider down and unregisters the SDK. Once per process: the operator keeps
   * the global provider it read, as the API's own tracers do, so a second recordSpans()
   * after trace.disable() would not be seen.
   */
  stop(): Promise<void>;
}

/** Registers the SDK as an application does, with an in-memory exporter. */
export function recordSpans(): SpanRecorder {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  return {
    spans: () => exporter.getFinishedSpans(),
    async stop() {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

/** The span `child`'s parent is `parent` (same trace, parent span id). */
export function isChildOf(child: ReadableSpan, parent: ReadableSpan | SpanContext): boolean {
  const of = 'spanContext' in parent ? parent.spanContext() : parent;
  return child.parentSpanContext?.spanId === of.spanId && child.spanContext().traceId === of.traceId;
}
