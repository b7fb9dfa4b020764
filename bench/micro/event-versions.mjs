#!/usr/bin/env node
// What issue 44's check costs a controller per watch event, without any I/O: a controller of
// ConfigMaps in one namespace, its informer's watch fed MODIFIED events of distinct objects
// (one reconcile each, which does nothing). `two`: a second informer of the kind (every
// namespace's, ahead of the first) may serve the reconciles' reads, so each run checks it;
// `one`: the common case, the controller's informer alone. `off`: the resourceVersions are
// not noted (the code before issue 44), the baseline. Reports CPU per event.
//   npm run build && node bench/micro/event-versions.mjs [events=100000] [one|two] [off]
import { ConfigMap, InformerCache, ManagedController, WorkerPool } from '@nestor/operator/runtime';

const events = Number(process.argv[2] ?? 100_000);
const informers = process.argv[3] ?? 'two';
const off = process.argv[4] === 'off';
if (off) {
  const url = new URL('../../packages/operator/dist/runtime/controller/event-versions.js', import.meta.url);
  const { EventVersions } = await import(url.href);
  EventVersions.prototype.note = () => {};
}

/** A transport whose LISTs are empty and whose WATCHes the bench feeds, one queue per path. */
class BenchTransport {
  protobuf = true;
  streams = new Map();
  async json() {
    return { items: [], metadata: { resourceVersion: '1' } };
  }
  stream(path) {
    const feed = { values: [], wake: undefined };
    this.streams.set(path, feed);
    return {
      async *[Symbol.asyncIterator]() {
        for (;;) {
          while (feed.values.length === 0) await new Promise((resolve) => (feed.wake = resolve));
          yield* feed.values.splice(0);
        }
      },
    };
  }
  push(path, values) {
    const feed = this.streams.get(path);
    feed.values.push(...values);
    feed.wake?.();
  }
}

async function round(count, rv) {
  const transport = new BenchTransport();
  const cache = new InformerCache(transport);
  const all = informers === 'two' ? cache.acquire(ConfigMap) : undefined;
  let done = 0;
  let finished;
  const reconciled = new Promise((resolve) => (finished = resolve));
  const controller = new ManagedController({
    name: 'bench',
    resource: ConfigMap,
    namespace: 'bench',
    maxConcurrentReconciles: 8,
    client: {
      scoped() {
        return this;
      },
    },
    reconcile: async () => {
      await null;
      if (++done === count) finished();
    },
  });
  controller.prepare(cache);
  await Promise.all(controller.informers.map((informer) => informer.whenSynced()));
  await all?.informer.whenSynced();
  while (transport.streams.size < (all ? 2 : 1)) await new Promise((resolve) => setImmediate(resolve));
  const pool = new WorkerPool({ concurrency: 8 });
  controller.start(pool);
  // Every namespace's informer stands past every event: each run checks it and goes at once.
  if (all) transport.push('/api/v1/configmaps', [bookmark(rv + count + 1)]);
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < count; i += 1000) {
    const slice = [];
    for (let j = i; j < Math.min(count, i + 1000); j++) slice.push(modified(`cm-${j}`, rv + j + 1));
    transport.push('/api/v1/namespaces/bench/configmaps', slice);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await reconciled;
  const { user, system } = process.cpuUsage(cpu);
  const ms = performance.now() - started;
  await controller.stop(1000);
  all?.release();
  cache.stopAll();
  return { cpuMicrosPerEvent: (user + system) / count, eventsPerSecond: count / (ms / 1000) };
}

function modified(name, rv) {
  const object = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'bench', resourceVersion: `${rv}` },
  };
  return { type: 'ADDED', object };
}

function bookmark(rv) {
  return { type: 'BOOKMARK', object: { kind: 'ConfigMap', metadata: { resourceVersion: `${rv}` } } };
}

await round(20_000, 1000); // warm-up
const result = await round(events, 1000);
console.log(
  JSON.stringify({
    node: process.version,
    events,
    informers,
    noted: !off,
    cpuMicrosPerEvent: Number(result.cpuMicrosPerEvent.toFixed(2)),
    eventsPerSecond: Math.round(result.eventsPerSecond),
  }),
);
