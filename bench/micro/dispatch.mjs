#!/usr/bin/env node
// The controller's own cost per reconcile, without any I/O: a source Observable feeds keys
// to a Controller (queue -> worker pool -> process) whose reconcile does nothing but await.
// Reports CPU per reconcile. No API server. With `otel`, an OpenTelemetry SDK is registered
// (spans recorded, none exported): the cost of tracing on; without it, the cost of tracing off.
//   npm run build && node bench/micro/dispatch.mjs [keys=200000] [workers=8] [otel]
import { Subject } from 'rxjs';
import { ManagedController, WorkerPool } from '@nestor/operator/runtime';
import { FakeKubeClient } from '@nestor/operator/fake';

const keys = Number(process.argv[2] ?? 200_000);
const workers = Number(process.argv[3] ?? 8);
const otel = process.argv[4] === 'otel';
if (otel) {
  const { context, trace } = await import('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const { TracerProvider } = await import('@opentelemetry/sdk-trace');
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(new TracerProvider());
}

async function round(count) {
  const source = new Subject();
  let done = 0;
  let finished;
  const all = new Promise((resolve) => (finished = resolve));
  const controller = new ManagedController({
    name: 'dispatch',
    sources: [source],
    maxConcurrentReconciles: workers,
    // A run always has a client; this bench's reconciles never use it.
    client: new FakeKubeClient(),
    reconcile: async () => {
      await null;
      if (++done === count) finished();
    },
  });
  controller.prepare(undefined);
  const pool = new WorkerPool({ concurrency: workers });
  controller.start(pool);
  const cpu = process.cpuUsage();
  const started = performance.now();
  // Feed in slices so the queue holds at most a few thousand keys, as under real load.
  for (let i = 0; i < count; i += 1000) {
    for (let j = i; j < Math.min(count, i + 1000); j++) source.next({ namespace: 'bench', name: `obj-${j}` });
    await new Promise((resolve) => setImmediate(resolve));
  }
  await all;
  const { user, system } = process.cpuUsage(cpu);
  const ms = performance.now() - started;
  await controller.stop(1000);
  return { cpuMicrosPerReconcile: (user + system) / count, reconcilesPerSecond: count / (ms / 1000) };
}

await round(20_000); // warm-up
const result = await round(keys);
console.log(
  JSON.stringify({
    node: process.version,
    keys,
    workers,
    otel,
    cpuMicrosPerReconcile: Number(result.cpuMicrosPerReconcile.toFixed(2)),
    reconcilesPerSecond: Math.round(result.reconcilesPerSecond),
  }),
);
