#!/usr/bin/env node
// CPU per request of Nestor's Transport against a real API server (TLS, bearer token):
// GETs of one small ConfigMap and server-side applies of it, at a given concurrency. The
// measure for changes to the request path (notes/transport.md: "measure CPU per request
// before and after any change to this path").
//   npm run build && node bench/micro/transport-requests.mjs [requests=3000] [concurrency=8]
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parallel, TestEnvironment } from '@nestor/testing';

// NESTOR_OPERATOR_DIST=path/to/dist compares another build of @nestor/operator (A/B).
const { Transport } = await import(
  process.env.NESTOR_OPERATOR_DIST
    ? pathToFileURL(`${process.env.NESTOR_OPERATOR_DIST}/index.js`).href
    : '@nestor/operator'
);
const requests = Number(process.argv[2] ?? 3000);
const concurrency = Number(process.argv[3] ?? 8);
const cpuUs = (since) => {
  const { user, system } = process.cpuUsage(since);
  return user + system;
};

const env = await TestEnvironment.start({ useExistingCluster: false });
try {
  const ns = await env.createNamespace('transport');
  const transport = await Transport.fromKubeConfig(env.kubeConfig);
  const path = `/api/v1/namespaces/${ns}/configmaps/probe`;
  const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'probe', namespace: ns }, data: { a: '1' } };
  const apply = () =>
    transport.json('PATCH', path, {
      body,
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: 'bench', force: true },
    });
  await apply();
  // Warm up the pool and the JIT.
  await parallel(Array.from({ length: 300 }), concurrency, () => transport.json('GET', path));

  const results = {};
  for (const [name, task] of [
    ['get', () => transport.json('GET', path)],
    ['apply', apply],
  ]) {
    const cpu = process.cpuUsage();
    const started = performance.now();
    await parallel(Array.from({ length: requests }), concurrency, task);
    const wallMs = performance.now() - started;
    results[name] = {
      requests,
      cpuMicrosPerRequest: Number((cpuUs(cpu) / requests).toFixed(1)),
      requestsPerSecond: Math.round(requests / (wallMs / 1000)),
    };
  }
  console.log(JSON.stringify({ node: process.version, concurrency, ...results, connections: transport.stats }));
  transport.close();
} finally {
  await env.stop();
}
