#!/usr/bin/env node
// What the request path leaves for the old generation: writes as a burst makes them (merge
// PATCHes of 500 ConfigMaps, 8 in flight, each with its reconcile's AbortSignal), over HTTP/2
// and over HTTP/1.1, each in a fresh process with the Deployment's V8 flags. Reports CPU per
// request, peak heap and RSS, the bytes scavenges promoted per request, and (--sites) where
// the objects that were promoted and then died in old space were allocated: the sampling heap
// profiler keeping what major GCs collected, which is the garbage that makes the peak.
//   npm run build && node bench/micro/transport-garbage.mjs [requests=4000] [--sites] [--runs 3] [--concurrency 8]
// NESTOR_CORE_DIST=path/to/packages/core/dist measures another build (A/B); CHILD_FLAGS adds V8
// flags to the measuring processes (e.g. "--no-allocation-site-pretenuring").
import { spawnSync } from 'node:child_process';
import { PerformanceObserver, constants as perfConstants } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import v8 from 'node:v8';
import { parseArgs } from 'node:util';

const here = fileURLToPath(import.meta.url);
const MB = (b) => Number((b / 2 ** 20).toFixed(1));

if (process.argv[2] === '--child') await child(JSON.parse(process.argv[3]));
else await main();

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      sites: { type: 'boolean', default: false },
      runs: { type: 'string', default: '3' },
      concurrency: { type: 'string', default: '8' },
    },
  });
  const requests = Number(positionals[0] ?? 4000);
  const { TestEnvironment, parallel } = await import('@nestor/testing');
  const env = await TestEnvironment.start({ useExistingCluster: false });
  try {
    const namespace = await env.createNamespace('garbage');
    const { Transport } = await import('@nestor/core');
    const load = await Transport.fromKubeConfig(env.kubeConfig);
    const names = Array.from({ length: 500 }, (_, i) => `cm-${i}`);
    await parallel(names, 16, (name) =>
      load.json('POST', `/api/v1/namespaces/${namespace}/configmaps`, {
        body: { metadata: { name }, data: { payload: 'x'.repeat(900) } },
      }),
    );
    load.close();
    const rows = [];
    for (let run = 0; run < Number(values.runs); run++) {
      for (const http2 of [true, false]) {
        const job = {
          kubeconfig: env.kubeconfigPath,
          namespace,
          requests,
          http2,
          concurrency: Number(values.concurrency),
          sites: values.sites && run === 0,
        };
        const flags = (process.env.CHILD_FLAGS ?? '').split(' ').filter(Boolean);
        const out = spawnSync(
          process.execPath,
          ['--max-semi-space-size=4', ...flags, here, '--child', JSON.stringify(job)],
          {
            stdio: ['ignore', 'pipe', 'inherit'],
            encoding: 'utf8',
          },
        );
        if (out.status !== 0) throw new Error(`the measuring process failed (${out.status ?? out.signal})`);
        const result = JSON.parse(out.stdout.trim().split('\n').at(-1));
        rows.push(result);
        console.log(JSON.stringify(result));
      }
    }
    console.log(
      '\n| protocol | CPU us/request | promoted B/request | peak heap MB | peak RSS MB | scavenges | mark-compacts |',
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|');
    for (const r of rows)
      console.log(
        `| ${r.http2 ? 'HTTP/2' : 'HTTP/1.1'} | ${r.cpuUsPerRequest} | ${r.promotedPerRequest} | ${r.peakHeapMB} | ${r.peakRssMB} | ${r.scavenges} | ${r.markCompacts} |`,
      );
  } finally {
    await env.stop();
  }
}

async function child({ kubeconfig, namespace, requests, http2, concurrency, sites }) {
  const core = process.env.NESTOR_CORE_DIST
    ? await import(pathToFileURL(`${process.env.NESTOR_CORE_DIST}/index.js`).href)
    : await import('@nestor/core');
  const { parallel } = await import('@nestor/testing');
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const transport = await core.Transport.fromKubeConfig(kc, { http2 });
  const patch = (i) => {
    const controller = new AbortController();
    return transport.json('PATCH', `/api/v1/namespaces/${namespace}/configmaps/cm-${i % 500}`, {
      body: { data: { n: String(i) } },
      contentType: 'application/merge-patch+json',
      signal: controller.signal,
    });
  };
  await parallel(
    Array.from({ length: 500 }, (_, i) => i),
    concurrency,
    patch,
  ); // warm: connections, JIT
  let session;
  if (sites) {
    const { Session } = await import('node:inspector/promises');
    session = new Session();
    session.connect();
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 4096,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: false,
    });
  }
  let scavenges = 0;
  let markCompacts = 0;
  const gcs = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.detail.kind === perfConstants.NODE_PERFORMANCE_GC_MINOR) scavenges++;
      else if (entry.detail.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR) markCompacts++;
    }
  });
  gcs.observe({ entryTypes: ['gc'] });
  const oldSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space').space_used_size;
  let peakHeap = 0;
  let peakRss = 0;
  // Bytes added to old space between samples, net of what mark-compacts freed: promoted.
  let promoted = 0;
  let lastOld = oldSpace();
  const sample = () => {
    peakHeap = Math.max(peakHeap, v8.getHeapStatistics().used_heap_size);
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
    const old = oldSpace();
    if (old > lastOld) promoted += old - lastOld;
    lastOld = old;
  };
  const sampler = setInterval(sample, 5);
  const cpu = process.cpuUsage();
  await parallel(
    Array.from({ length: requests }, (_, i) => i),
    concurrency,
    patch,
  );
  const used = process.cpuUsage(cpu);
  sample();
  clearInterval(sampler);
  gcs.disconnect();
  if (session) {
    const { profile } = await session.post('HeapProfiler.stopSampling');
    printSites(profile, requests);
  }
  transport.close();
  console.log(
    JSON.stringify({
      http2,
      requests,
      cpuUsPerRequest: Math.round((used.user + used.system) / requests),
      promotedPerRequest: Math.round(promoted / requests),
      peakHeapMB: MB(peakHeap),
      peakRssMB: MB(peakRss),
      scavenges,
      markCompacts,
    }),
  );
}

/** Allocation sites of what major GCs collected (promoted garbage), by self size. */
function printSites(profile, requests) {
  const bySite = new Map();
  const walk = (node, stack) => {
    const frame = node.callFrame;
    const here = frame.url
      ? `${frame.functionName || '(anonymous)'} ${frame.url.replace(/.*\/(node_modules|packages)\//, '')}:${frame.lineNumber + 1}`
      : frame.functionName;
    const path = [...stack, here].slice(-4);
    if (node.selfSize > 0) {
      const key = path.join(' < ');
      bySite.set(key, (bySite.get(key) ?? 0) + node.selfSize);
    }
    for (const c of node.children) walk(c, path);
  };
  walk(profile.head, []);
  const total = [...bySite.values()].reduce((a, b) => a + b, 0);
  console.error(
    `\n${process.env.NESTOR_LABEL ?? ''} sampled promoted-then-collected: ${MB(total)} MB, top sites (B/request):`,
  );
  for (const [site, size] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 25))
    console.error(`  ${String(Math.round(size / requests)).padStart(6)}  ${site.split(' < ').reverse().join(' < ')}`);
}
