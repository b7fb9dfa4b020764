#!/usr/bin/env node
// The cost of finding dead connections sooner: one process holds 1,000 idle watches (one
// stream each, a label selector apiece, on one real API server) and nothing changes; over a
// quiet window it measures the process's CPU, the HTTP/2 PINGs it sent and the connections
// they went over, and the watch requests it made. Rows: the transport's defaults (PING after
// 5 s idle, 10 s for the answer), client-go's liveness values (30 s + 15 s), and HTTP/1.1
// (a socket per watch, TCP keepalive, watches ended by the server after [25, 50) s).
// The PING counts include the bench's own client to the API server (one HTTP/2 connection,
// idle: the HTTP/1.1 row's PINGs are its alone). Not part of npm test.
//   npm run build && node bench/idle-watches.mjs [--watches 1000] [--seconds 60] [--out FILE]
import http2 from 'node:http2';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Transport } from '@nestor/core';
import { TestEnvironment } from '@nestor/testing';

const { values } = parseArgs({
  options: {
    watches: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '60' },
    out: { type: 'string' },
  },
});
const W = Number(values.watches);
const SECONDS = Number(values.seconds);
const here = dirname(fileURLToPath(import.meta.url));
const log = (line) => console.error(`[idle-watches] ${line}`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Every PING the process sends, and the sessions that sent them (Node's Http2Session.ping).
const pinged = new Set();
let pings = 0;
{
  const probe = http2.connect('http://127.0.0.1:1');
  probe.on('error', () => {});
  const proto = Object.getPrototypeOf(Object.getPrototypeOf(probe));
  const ping = proto.ping;
  proto.ping = function (...args) {
    pings++;
    pinged.add(this);
    return ping.apply(this, args);
  };
  probe.destroy();
}

const env = await TestEnvironment.start({ useExistingCluster: false });
const rows = [];

async function measure(label, options) {
  const ns = await env.createNamespace('idle');
  const transport = await Transport.fromKubeConfig(env.kubeConfig, options);
  const stop = new AbortController();
  const path = `/api/v1/namespaces/${ns}/configmaps`;
  const streams = Array.from({ length: W }, (_, i) =>
    (async () => {
      // A watcher's loop: the server ends each watch at its timeout; start the next.
      while (!stop.signal.aborted) {
        try {
          const query = { watch: true, allowWatchBookmarks: true, labelSelector: `w=${i}`, timeoutSeconds: 0 };
          query.timeoutSeconds = options.http2 === false ? 25 + Math.floor(Math.random() * 25) : 300;
          for await (const _ of transport.stream(path, query, stop.signal));
        } catch {
          if (!stop.signal.aborted) await sleep(1000);
        }
      }
    })(),
  );
  // Let every watch open and the first PINGs settle before the window.
  await sleep(10_000);
  const watchesBefore = transport.stats.watches;
  pings = 0;
  pinged.clear();
  const cpu = process.cpuUsage();
  const startedAt = performance.now();
  await sleep(SECONDS * 1000);
  const elapsed = (performance.now() - startedAt) / 1000;
  const used = process.cpuUsage(cpu);
  const row = {
    label,
    watches: W,
    seconds: Number(elapsed.toFixed(1)),
    cpuSeconds: Number(((used.user + used.system) / 1e6).toFixed(2)),
    cpuPercent: Number((((used.user + used.system) / 1e6 / elapsed) * 100).toFixed(2)),
    pings,
    pingsPerSecond: Number((pings / elapsed).toFixed(2)),
    connectionsPinged: pinged.size,
    watchRequests: transport.stats.watches - watchesBefore,
    rssMB: Math.round(process.memoryUsage().rss / 1e6),
  };
  log(JSON.stringify(row));
  rows.push(row);
  stop.abort();
  await Promise.allSettled(streams);
  transport.close();
}

try {
  await measure('defaults (HTTP/2, PING after 5 s idle, 10 s for the answer)', {});
  await measure("client-go's liveness (HTTP/2, 30 s + 15 s)", { http2ReadIdleMs: 30_000, http2PingTimeoutMs: 15_000 });
  await measure('HTTP/1.1 (http2: false; TCP keepalive 5 s)', { http2: false });
} finally {
  await env.stop();
}

const table = [
  `## Idle watches ${new Date().toISOString()}: ${W} watches, ${SECONDS} s quiet, load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
  '',
  '| transport | CPU | CPU % of a core | PINGs | PINGs/s | connections PINGed | watch requests | RSS |',
  '|---|---:|---:|---:|---:|---:|---:|---:|',
  ...rows.map(
    (r) =>
      `| ${r.label} | ${r.cpuSeconds} s | ${r.cpuPercent} % | ${r.pings} | ${r.pingsPerSecond} | ${r.connectionsPinged} | ${r.watchRequests} | ${r.rssMB} MB |`,
  ),
].join('\n');
console.log(table);
const out =
  values.out ?? join(here, 'results', `idle-watches-${new Date().toISOString().slice(0, 16).replace(':', '')}.json`);
await writeFile(out, JSON.stringify({ watches: W, seconds: SECONDS, loadAverage: os.loadavg(), rows }, null, 2));
await writeFile(out.replace(/\.json$/, '.md'), `${table}\n`);
log(`results: ${out}`);
