#!/usr/bin/env node
// GETs and LISTs through Nestor's Transport against a real kube-apiserver (TLS, bearer
// token), over HTTP/1.1 and HTTP/2: a GET of one small ConfigMap (JSON) and a LIST of
// `items` ConfigMaps (protobuf, streamed through listPages, as the informers list). Reports
// process CPU per request and latency p50/p99 for each. With NESTOR_CORE_A=dist and
// NESTOR_CORE_B=dist it interleaves two builds of @nestor/core in one process, batch by
// batch, so that machine drift hits both alike (the measure for a change to the request path).
//   npm run build && node bench/micro/transport-protocols.mjs [--batches 10] [--batch 200] [--items 100]
//   NESTOR_CORE_A=bench/.ab/base-core NESTOR_CORE_B=packages/core/dist node bench/micro/transport-protocols.mjs
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { parallel, TestEnvironment } from '@nestor/testing';
import { mean, percentile, stddev } from '../lib/common.mjs';

const { values: args } = parseArgs({
  options: {
    batches: { type: 'string', default: '10' },
    batch: { type: 'string', default: '200' },
    items: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '8' },
  },
});
const batches = Number(args.batches);
const batch = Number(args.batch);
const concurrency = Number(args.concurrency);

const builds = Object.entries({ A: process.env.NESTOR_CORE_A, B: process.env.NESTOR_CORE_B }).filter(([, d]) => d);
if (builds.length === 0) builds.push(['current', undefined]);

const env = await TestEnvironment.start({ useExistingCluster: false });
try {
  const ns = await env.createNamespace('protocols');
  const base = `/api/v1/namespaces/${ns}/configmaps`;
  await parallel(Array.from({ length: Number(args.items) }), 8, (_, i) =>
    env.client.request('POST', base, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `c${i}` },
      data: { i: `${i}` },
    }),
  );
  const variants = [];
  for (const [build, dist] of builds) {
    const core = await import(dist ? pathToFileURL(resolve(dist, 'index.js')).href : '@nestor/core');
    for (const http2 of [false, true]) {
      const transport = await core.Transport.fromKubeConfig(env.kubeConfig, { http2 });
      const list = async () => {
        let n = 0;
        for await (const page of core.listPages(transport, base, { protobuf: true })) n += page.items.length;
        return n;
      };
      variants.push({
        name: `${build} ${http2 ? 'h2' : 'http/1.1'}`,
        transport,
        ops: { get: () => transport.json('GET', `${base}/c0`), list },
        samples: { get: [], list: [] },
      });
    }
  }
  const run = async (variant, op) => {
    const latencies = [];
    const cpu = process.cpuUsage();
    await parallel(Array.from({ length: batch }), concurrency, async () => {
      const started = performance.now();
      await variant.ops[op]();
      latencies.push(performance.now() - started);
    });
    const { user, system } = process.cpuUsage(cpu);
    return { cpu: (user + system) / batch, latencies };
  };
  for (const v of variants) for (const op of ['get', 'list']) await run(v, op); // warm-up: JIT, connections
  for (let round = 0; round < batches; round++) {
    // Alternate the order, so neither build always follows the other's load.
    const order = round % 2 ? [...variants].reverse() : variants;
    for (const op of ['get', 'list']) for (const v of order) v.samples[op].push(await run(v, op));
  }
  const rows = {};
  for (const v of variants) {
    for (const op of ['get', 'list']) {
      const samples = v.samples[op];
      const latencies = samples.flatMap((s) => s.latencies).sort((a, b) => a - b);
      const cpu = samples.map((s) => s.cpu);
      rows[`${v.name} ${op}`] = {
        cpuUsPerReq: `${mean(cpu).toFixed(0)} ± ${stddev(cpu).toFixed(0)}`,
        p50Ms: percentile(latencies, 50).toFixed(2),
        p99Ms: percentile(latencies, 99).toFixed(2),
      };
    }
    v.transport.close();
  }
  console.log(JSON.stringify({ node: process.version, batches, batch, concurrency, items: Number(args.items) }));
  console.table(rows);
} finally {
  await env.stop();
}
