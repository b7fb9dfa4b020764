// The parts of prom-client the metrics use, each from its own file: the package's index
// also loads its Pushgateway (node:http, node:https, node:zlib), Summary (tdigest, bintrees)
// and cluster aggregation, and its default metrics load @opentelemetry/api (~50 modules) for
// exemplars on the CPU counters, none of which an operator uses (bench/floor.mjs). The files
// are the index's own, so a Registry made here is the one `new Registry()` from 'prom-client' is.
import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';
import { processCpuMetrics } from './process-cpu-metrics.js';

const require = createRequire(import.meta.url);

export const prom = {
  Registry: require('prom-client/lib/registry') as typeof PromClient.Registry,
  Counter: require('prom-client/lib/counter') as typeof PromClient.Counter,
  Gauge: require('prom-client/lib/gauge') as typeof PromClient.Gauge,
  Histogram: require('prom-client/lib/histogram') as typeof PromClient.Histogram,
};

type DefaultMetric = (registry: PromClient.Registry, config: { eventLoopMonitoringPrecision: number }) => void;

/**
 * prom-client's default metrics (its collectDefaultMetrics, in its order), the CPU counters
 * made here without exemplars: process_*, nodejs_* (event loop lag, heap, handles, GC), as
 * controller-runtime's Go collector exports process_* and go_*.
 */
export function collectDefaultMetrics(registry: PromClient.Registry): void {
  processCpuMetrics(registry, prom.Counter);
  const metric = (name: string) => require(`prom-client/lib/metrics/${name}`) as DefaultMetric;
  const names = [
    'processStartTime',
    'osMemoryHeap',
    'processOpenFileDescriptors',
    'processMaxFileDescriptors',
    'eventLoopLag',
    // As prom-client: active resources where Node reports them (it does from 17).
    ...(typeof process.getActiveResourcesInfo === 'function' ? ['processResources'] : []),
    'processHandles',
    'processRequests',
    'heapSizeAndUsed',
    'heapSpacesSizeAndUsed',
    'version',
    'gc',
  ];
  for (const name of names) metric(name)(registry, { eventLoopMonitoringPrecision: 10 });
}
