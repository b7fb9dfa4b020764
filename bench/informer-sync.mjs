#!/usr/bin/env node
// CPU, throughput and memory of the watch -> informer path against a real API server.
//   npm run build && node --expose-gc bench/informer-sync.mjs [objects=5000]
//   NESTOR_PROTOBUF=false: list and watch in JSON (the default is protobuf for built-in kinds)
// Creates the ConfigMaps (~1 KiB each) before measuring, then measures in this process:
//   1. the initial paginated LIST until synced: wall time, CPU, objects/s;
//   2. heap bytes per cached object (after a full GC);
//   3. a stream of updates (one merge patch per object, sent by a separate process so
//      that only the receiving side is measured): CPU per event and events/s.
import { fork } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigMap, InformerCache, Transport } from '@nestor/operator/runtime';
import { parallel, TestEnvironment } from '@nestor/testing';

const PAYLOAD = 'x'.repeat(860); // with metadata, ~1 KiB of JSON per object

const path = (ns, name = '') => `/api/v1/namespaces/${ns}/configmaps${name ? `/${name}` : ''}`;

// Child mode: patch every object once, then exit.
if (process.argv[2] === '--patch') {
  const [, , , kubeconfig, ns, count] = process.argv;
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const transport = await Transport.fromKubeConfig(kc);
  const names = Array.from({ length: Number(count) }, (_, i) => `cm-${i}`);
  await parallel(names, 32, (name) =>
    transport.json('PATCH', path(ns, name), {
      body: { data: { round: '2' } },
      contentType: 'application/merge-patch+json',
    }),
  );
  transport.close();
  process.exit(0);
}

const count = Number(process.argv[2] ?? 5000);
const gc = globalThis.gc ?? (() => console.warn('run with --expose-gc for heap numbers'));
const heap = () => (gc(), gc(), process.memoryUsage().heapUsed);
const cpuMs = (since) => {
  const { user, system } = process.cpuUsage(since);
  return (user + system) / 1000;
};

const env = await TestEnvironment.start({ useExistingCluster: process.env.USE_EXISTING_CLUSTER === 'true' });
try {
  const ns = await env.createNamespace('bench');
  const setup = await Transport.fromKubeConfig(env.kubeConfig);
  const names = Array.from({ length: count }, (_, i) => `cm-${i}`);
  await parallel(names, 32, (name) =>
    setup.json('POST', path(ns), {
      body: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, labels: { app: 'bench' } },
        data: { payload: PAYLOAD },
      },
    }),
  );
  const sample = await setup.request('GET', path(ns, 'cm-0'));
  setup.close();

  const transport = await Transport.fromKubeConfig(env.kubeConfig, {
    protobuf: process.env.NESTOR_PROTOBUF !== 'false',
  });
  const cache = new InformerCache(transport);
  const heapBefore = heap();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const { informer } = cache.acquire(ConfigMap, { namespace: ns });
  await informer.whenSynced();
  const syncMs = performance.now() - started;
  const syncCpuMs = cpuMs(cpuBefore);
  const heapAfter = heap();
  if (informer.size !== count) throw new Error(`synced ${informer.size} objects, expected ${count}`);

  let updates = 0;
  let firstAt = 0;
  let cpuAtFirst;
  const done = new Promise((resolve) => {
    informer.events$.subscribe((event) => {
      if (event.type !== 'updated') return;
      if (updates++ === 0) {
        firstAt = performance.now();
        cpuAtFirst = process.cpuUsage();
      }
      if (updates === count) resolve(performance.now());
    });
  });
  const patcher = fork(new URL(import.meta.url).pathname, ['--patch', env.kubeconfigPath, ns, String(count)]);
  const lastAt = await done;
  const streamCpuMs = cpuMs(cpuAtFirst);
  await new Promise((resolve) => patcher.once('exit', resolve));

  const round = (n, digits = 0) => Number(n.toFixed(digits));
  console.log(
    JSON.stringify(
      {
        node: process.version,
        protobuf: transport.protobuf,
        objects: count,
        objectJsonBytes: sample.body.length,
        initialSync: {
          wallMs: round(syncMs),
          cpuMs: round(syncCpuMs),
          objectsPerSecond: round(count / (syncMs / 1000)),
          cpuMicrosPerObject: round((syncCpuMs * 1000) / count, 1),
          listRequests: transport.stats.requests,
        },
        heapBytesPerObject: round((heapAfter - heapBefore) / count),
        updateStream: {
          events: updates,
          wallMs: round(lastAt - firstAt),
          eventsPerSecond: round(count / ((lastAt - firstAt) / 1000)),
          cpuMs: round(streamCpuMs),
          cpuMicrosPerEvent: round((streamCpuMs * 1000) / count, 1),
          note: 'events/s is bounded by the API server writes of the patching process, not by the informer',
        },
        rssMB: round(process.memoryUsage().rss / 2 ** 20),
      },
      null,
      2,
    ),
  );
  cache.stopAll();
  transport.close();
} finally {
  await env.stop();
}
