#!/usr/bin/env node
// The client side of one request, alone: Nestor's Transport against a stand-in HTTPS server
// (a child process on 127.0.0.1 with a throwaway CA from openssl) that answers every request
// with a 1 KiB JSON object. Reports this process's CPU per request, for the request path
// without the API server's noise. With A=dist B=dist it interleaves two builds of
// @nestor/operator in one process, batch by batch, so that machine drift hits both alike.
//   npm run build && node bench/micro/transport-overhead.mjs [requests=20000] [concurrency=8]
//   [CLIENT_CERT=1] NESTOR_OPERATOR_A=path/to/dist NESTOR_OPERATOR_B=path/to/other/dist node bench/micro/transport-overhead.mjs
import { execFileSync, fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { parallel } from '@nestor/testing';
import { mean, stddev } from '../lib/common.mjs';

if (process.argv[2] === '--serve') {
  const dir = process.argv[3];
  const body = JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'x' },
    data: { a: 'x'.repeat(900) },
  });
  const server = createServer(
    { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
    (req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      });
    },
  );
  server.keepAliveTimeout = 120_000;
  server.listen(0, '127.0.0.1', () => process.send(server.address().port));
} else {
  const requests = Number(process.argv[2] ?? 20000);
  const concurrency = Number(process.argv[3] ?? 8);
  const dir = mkdtempSync(join(tmpdir(), 'nestor-transport-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  const server = fork(new URL(import.meta.url).pathname, ['--serve', dir]);
  try {
    const port = await new Promise((resolve) => server.once('message', resolve));
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        {
          name: 'c',
          server: `https://127.0.0.1:${port}`,
          caData: readFileSync(join(dir, 'cert.pem')).toString('base64'),
        },
      ],
      // CLIENT_CERT=1: authenticate with a client certificate (more TLS material per agent).
      users: [
        process.env.CLIENT_CERT
          ? {
              name: 'u',
              certData: readFileSync(join(dir, 'cert.pem')).toString('base64'),
              keyData: readFileSync(join(dir, 'key.pem')).toString('base64'),
            }
          : { name: 'u', token: 'a'.repeat(40) },
      ],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const builds = Object.entries({ A: process.env.NESTOR_OPERATOR_A, B: process.env.NESTOR_OPERATOR_B }).filter(
      ([, d]) => d,
    );
    if (builds.length === 0) builds.push(['current', undefined]);
    const variants = [];
    for (const [name, distDir] of builds) {
      const { Transport } = await import(distDir ? pathToFileURL(join(distDir, 'index.js')).href : '@nestor/operator');
      variants.push({
        name,
        dist: distDir ?? '@nestor/operator',
        transport: await Transport.fromKubeConfig(kc),
        samples: [],
      });
    }
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { a: '1' } };
    const one = (transport, i) =>
      i % 2
        ? transport.json('GET', '/api/v1/namespaces/default/configmaps/x')
        : transport.json('PATCH', '/api/v1/namespaces/default/configmaps/x', {
            body,
            contentType: 'application/apply-patch+yaml',
            query: { fieldManager: 'bench', force: true },
          });
    const batch = 2000;
    for (const v of variants) await parallel(Array.from({ length: batch }), concurrency, (_, i) => one(v.transport, i)); // warm-up
    for (let done = 0; done < requests; done += batch) {
      for (const v of variants) {
        const cpu = process.cpuUsage();
        await parallel(Array.from({ length: batch }), concurrency, (_, i) => one(v.transport, i));
        const { user, system } = process.cpuUsage(cpu);
        v.samples.push((user + system) / batch);
      }
    }
    for (const v of variants) {
      v.transport.close();
      console.log(
        JSON.stringify({
          variant: v.name,
          dist: v.dist,
          cpuMicrosPerRequest: Number(mean(v.samples).toFixed(1)),
          stddev: Number(stddev(v.samples).toFixed(1)),
          median: Number([...v.samples].sort((a, b) => a - b)[v.samples.length >> 1].toFixed(1)),
          batches: v.samples.length,
          node: process.version,
        }),
      );
    }
  } finally {
    server.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}
