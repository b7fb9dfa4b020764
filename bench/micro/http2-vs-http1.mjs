#!/usr/bin/env node
// HTTP/1.1 keep-alive pools against one multiplexed HTTP/2 connection, to a real
// kube-apiserver (TLS, bearer token): the operator's request mix (GET of an object,
// server-side apply of a ConfigMap that changes it, merge patch of a custom resource's
// status), at 8 and 32 in flight, with `watches` idle watches open. Each path runs in its
// own child process, alternating, `rounds` times, so that machine drift hits both alike and
// memory is the path's own. Reports process CPU per request, latency p50/p99, RSS and heap.
//   npm run build && node bench/micro/http2-vs-http1.mjs [--rounds 5] [--requests 3000] [--watches 50]
//     [--paths http1,http2,prototype]
// Paths: http1 = Transport({ http2: false }); http2 = Transport's default; prototype = the
// first node:http2 sketch below, kept as the measurement that decided (no retries, no
// liveness: only the request path).
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { URLSearchParams } from 'node:url';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { parallel, TestEnvironment } from '@nestor/testing';
import { mean, percentile, stddev, WIDGET_CRD, widgetsPath } from '../lib/common.mjs';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    requests: { type: 'string', default: '3000' },
    watches: { type: 'string', default: '50' },
    paths: { type: 'string', default: 'http1,http2' },
    child: { type: 'string' },
    kubeconfig: { type: 'string' },
    namespace: { type: 'string' },
  },
});

if (args.child) await child(args.child);
else await driver();

async function driver() {
  const env = await TestEnvironment.start({ useExistingCluster: false, crds: [WIDGET_CRD] });
  const dir = mkdtempSync(join(tmpdir(), 'nestor-h2-'));
  try {
    const namespace = await env.createNamespace('h2');
    await env.client.request('POST', widgetsPath(namespace), {
      apiVersion: 'bench.nestor.dev/v1',
      kind: 'Widget',
      metadata: { name: 'w' },
      spec: { size: 1 },
    });
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, env.kubeConfig.exportConfig());
    const paths = args.paths.split(',');
    const runs = Object.fromEntries(paths.map((p) => [p, []]));
    for (let round = 0; round < Number(args.rounds); round++) {
      // Alternate which path goes first, so neither always follows the other's load.
      const order = round % 2 ? [...paths].reverse() : paths;
      for (const path of order) {
        const result = await runChild(path, kubeconfig, namespace);
        runs[path].push(result);
        console.error(`round ${round + 1} ${path}: ${JSON.stringify(result)}`);
      }
    }
    console.log(JSON.stringify(summarize(runs), null, 1));
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await env.stop();
  }
}

function runChild(path, kubeconfig, namespace) {
  const argv = ['--child', path, '--kubeconfig', kubeconfig, '--namespace', namespace];
  argv.push('--requests', args.requests, '--watches', args.watches);
  const proc = fork(new URL(import.meta.url).pathname, argv, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    let result;
    proc.once('message', (message) => (result = message));
    proc.once('exit', (code) => (code === 0 && result ? resolve(result) : reject(new Error(`${path}: exit ${code}`))));
  });
}

function summarize(runs) {
  const out = {};
  for (const [path, results] of Object.entries(runs)) {
    const row = {};
    for (const key of Object.keys(results[0] ?? {})) {
      const samples = results.map((r) => r[key]).filter((v) => typeof v === 'number');
      if (samples.length) row[key] = `${mean(samples).toFixed(1)} ± ${stddev(samples).toFixed(1)}`;
      else row[key] = results[0][key];
    }
    out[path] = row;
  }
  return out;
}

async function child(path) {
  const kc = new KubeConfig();
  kc.loadFromFile(args.kubeconfig);
  const namespace = args.namespace;
  const requests = Number(args.requests);
  const client = await clientFor(path, kc);
  const cm = `/api/v1/namespaces/${namespace}/configmaps/probe-${process.pid}`;
  const status = `${widgetsPath(namespace, 'w')}/status`;
  let n = 0;
  const ops = [
    () => client.json('GET', `${widgetsPath(namespace, 'w')}`),
    () =>
      client.json('PATCH', cm, {
        body: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `probe-${process.pid}` },
          data: { n: `${n++}` },
        },
        contentType: 'application/apply-patch+yaml',
        query: { fieldManager: 'bench', force: true },
      }),
    () =>
      client.json('PATCH', status, {
        body: { status: { phase: `p${n++}` } },
        contentType: 'application/merge-patch+json',
      }),
  ];
  const one = async (_, i) => {
    const started = performance.now();
    await ops[i % 3]();
    return performance.now() - started;
  };
  // Idle watches (a namespace with no ConfigMaps of this label): what they cost to hold open.
  const watching = new AbortController();
  const watches = Array.from({ length: Number(args.watches) }, () =>
    (async () => {
      try {
        for await (const _ of client.stream(
          '/api/v1/configmaps',
          {
            watch: true,
            labelSelector: 'bench=none',
            allowWatchBookmarks: true,
            timeoutSeconds: 600,
          },
          watching.signal,
        ))
          void _;
      } catch (error) {
        if (!watching.signal.aborted) console.error(`${path}: watch failed: ${error.message}`);
      }
    })(),
  );
  await parallel(Array.from({ length: 600 }), 8, one); // warm-up: JIT, connections
  const result = { ...client.describe() };
  for (const concurrency of [8, 32]) {
    const latencies = [];
    const cpu = process.cpuUsage();
    const started = performance.now();
    await parallel(Array.from({ length: requests }), concurrency, async (x, i) => latencies.push(await one(x, i)));
    const wall = performance.now() - started;
    const { user, system } = process.cpuUsage(cpu);
    latencies.sort((a, b) => a - b);
    result[`c${concurrency}CpuUsPerReq`] = (user + system) / requests;
    result[`c${concurrency}ReqPerS`] = requests / (wall / 1000);
    result[`c${concurrency}P50Ms`] = percentile(latencies, 50);
    result[`c${concurrency}P99Ms`] = percentile(latencies, 99);
  }
  const memory = process.memoryUsage();
  result.rssMB = memory.rss / 2 ** 20;
  result.heapUsedMB = memory.heapUsed / 2 ** 20;
  result.connections = client.connections();
  watching.abort();
  await Promise.all(watches);
  client.close();
  process.send(result, () => process.exit(0));
}

async function clientFor(path, kc) {
  if (path === 'prototype') return prototype(kc);
  const { Transport } = await import('@nestor/core');
  const transport = await Transport.fromKubeConfig(kc, path === 'http1' ? { http2: false } : {});
  return {
    json: (...a) => transport.json(...a),
    stream: (...a) => transport.stream(...a),
    describe: () => ({ protocol: transport.protocol ?? 'http/1.1' }),
    connections: () => openSockets(),
    close: () => transport.close(),
  };
}

/** Open TCP sockets of this process (a Linux count from /proc: pools hide theirs). */
function openSockets() {
  return process.getActiveResourcesInfo().filter((r) => r === 'TLSSocketWrap' || r === 'TCPSocketWrap').length;
}

/** The first sketch: one node:http2 session, the kubeconfig's TLS and bearer token, nothing else. */
async function prototype(kc) {
  const options = {};
  await kc.applyToHTTPSOptions(options);
  const server = kc.getCurrentCluster().server;
  const headers = { accept: 'application/json', 'user-agent': 'nestor', ...options.headers };
  const session = http2.connect(server, { ca: options.ca, cert: options.cert, key: options.key });
  session.on('error', () => {});
  await new Promise((resolve, reject) => session.once('connect', resolve).once('error', reject));
  const send = (method, path, opts = {}) => {
    const query = new URLSearchParams(
      Object.entries(opts.query ?? {})
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => [k, String(v)]),
    ).toString();
    const body = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
    const stream = session.request(
      {
        ':method': method,
        ':path': path + (query ? `?${query}` : ''),
        ...headers,
        ...(body ? { 'content-type': opts.contentType ?? 'application/json' } : {}),
      },
      { endStream: !body, ...(opts.signal ? { signal: opts.signal } : {}) },
    );
    if (body) stream.end(body);
    return stream;
  };
  return {
    async json(method, path, opts) {
      const stream = send(method, path, opts);
      const [status, body] = await new Promise((resolve, reject) => {
        let code = 0;
        const chunks = [];
        stream.on('response', (h) => (code = h[':status']));
        stream.on('data', (c) => chunks.push(c));
        stream.on('end', () => resolve([code, Buffer.concat(chunks)]));
        stream.on('error', reject);
      });
      if (status >= 400) throw new Error(`${method} ${path}: ${status} ${body}`);
      return JSON.parse(body.toString('utf8'));
    },
    async *stream(path, query, signal) {
      const stream = send('GET', path, { query, signal });
      let rest = '';
      for await (const chunk of stream) {
        const lines = (rest + chunk.toString('utf8')).split('\n');
        rest = lines.pop();
        for (const line of lines) if (line) yield JSON.parse(line);
      }
    },
    describe: () => ({
      protocol: session.alpnProtocol,
      serverMaxConcurrentStreams: session.remoteSettings.maxConcurrentStreams,
      serverInitialWindowSize: session.remoteSettings.initialWindowSize,
    }),
    connections: () => openSockets(),
    close: () => session.close(),
  };
}
