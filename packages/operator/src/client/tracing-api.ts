// @opentelemetry/api, loaded once an SDK registered a tracer provider: until then Nestor
// makes no span, and the API's ~50 modules stay out of an operator's memory. Loaded with
// require: its CommonJS build is the copy prom-client loads, not a second one beside it.
import { createRequire } from 'node:module';
import type * as OpenTelemetry from '@opentelemetry/api';

// Where every copy of the API 1.x keeps what was registered (its internal/global-utils):
// `trace.setGlobalTracerProvider` puts a `trace` entry here, whichever copy the SDK used.
const REGISTERED = Symbol.for('opentelemetry.js.api.1');

let api: typeof OpenTelemetry | undefined;

/** The API, or undefined while no copy of it has a tracer provider registered. */
export function tracingApi(): typeof OpenTelemetry | undefined {
  if (api) return api;
  const registered = (globalThis as { [REGISTERED]?: { trace?: unknown } })[REGISTERED];
  if (!registered?.trace) return undefined;
  api = createRequire(import.meta.url)('@opentelemetry/api') as typeof OpenTelemetry;
  return api;
}
