#!/usr/bin/env node
// What the wire format of a paginated LIST costs, JSON against protobuf, on the real API server.
//   npm run build && node bench/micro/list-wire-format.mjs [objects=50000] [reps=3] [--save DIR]
//   VARIANTS=json,protobuf,protobuf-rv0,protobuf-rv0-notolder,protobuf-rv-notolder  which LISTs
//   (default the first three); NO_STREAM=1 skips the watch-stream runs
// Creates the ConfigMaps (~1 KiB of JSON each), then lists them in pages of 500 (as the
// informer does), alternating the two formats: wall time, kube-apiserver's and etcd's CPU
// (/proc/<pid>/stat), this process's CPU, bytes. Then decodes the pages of the last round:
// JSON.parse against Nestor's protobuf decoder. --save keeps the pages for offline runs
// (frames of a 4-byte length and the body, one file per format). Also the same state as a
// watch stream with sendInitialEvents (WatchList), JSON lines against protobuf frames, decoded.
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Transport } from '@nestor/core';
import { parallel, TestEnvironment } from '@nestor/testing';
import { PAYLOAD } from '../lib/common.mjs';

const args = process.argv.slice(2);
const saveAt = args.indexOf('--save');
const saveDir = saveAt >= 0 ? args.splice(saveAt, 2)[1] : undefined;
const count = Number(args[0] ?? 50_000);
const reps = Number(args[1] ?? 3);
const FORMATS = {
  json: 'application/json',
  protobuf: 'application/vnd.kubernetes.protobuf, application/json',
  'protobuf-rv0': 'application/vnd.kubernetes.protobuf, application/json',
  'protobuf-rv0-notolder': 'application/vnd.kubernetes.protobuf, application/json',
  'protobuf-rv-notolder': 'application/vnd.kubernetes.protobuf, application/json',
};

const TICK_MS = 10; // USER_HZ = 100 on Linux
const procCpuMs = (pid) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS; // utime, stime
};
const selfCpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

const env = await TestEnvironment.start({ useExistingCluster: false });
try {
  const [etcdPid, apiServerPid] = env.pids;
  const ns = await env.createNamespace('wire');
  const path = `/api/v1/namespaces/${ns}/configmaps`;
  const transport = await Transport.fromKubeConfig(env.kubeConfig);
  const createStarted = performance.now();
  await parallel(
    Array.from({ length: count }, (_, i) => `cm-${i}`),
    32,
    (name) =>
      transport.json('POST', path, {
        body: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name, labels: { app: 'bench' } },
          data: { payload: PAYLOAD },
        },
      }),
  );
  console.error(`created ${count} ConfigMaps in ${Math.round(performance.now() - createStarted)} ms`);

  const listAll = async (format) => {
    const pages = [];
    const accept = FORMATS[format];
    // protobuf-rv0: the first page at resourceVersion 0 (any version the watch cache has, as
    // client-go's reflector lists when it does not stream), not a consistent read.
    let first = {};
    if (format === 'protobuf-rv0') first = { resourceVersion: '0' };
    if (format === 'protobuf-rv0-notolder') first = { resourceVersion: '0', resourceVersionMatch: 'NotOlderThan' };
    if (format === 'protobuf-rv-notolder') {
      // The current resourceVersion (a LIST of one), then pages not older than it.
      const one = await transport.json('GET', path, { query: { limit: 1 } });
      first = { resourceVersion: one.metadata.resourceVersion, resourceVersionMatch: 'NotOlderThan' };
    }
    let token;
    do {
      const query = token ? { limit: 500, continue: token } : { limit: 500, ...first };
      const res = await transport.request('GET', path, { query, accept });
      if (res.status !== 200) throw new Error(`LIST answered ${res.status}: ${res.body.toString().slice(0, 300)}`);
      pages.push({ contentType: res.headers['content-type'], body: res.body });
      token = continueOf(res.body, res.headers['content-type']);
    } while (token);
    return pages;
  };

  /** The state as one watch stream (WatchList, as client-go syncs): events until the initial-events-end bookmark. */
  const streamAll = async (protobuf) => {
    const abort = new AbortController();
    const query = {
      watch: true,
      sendInitialEvents: true,
      resourceVersionMatch: 'NotOlderThan',
      allowWatchBookmarks: true,
    };
    let events = 0;
    for await (const event of transport.stream(path, query, abort.signal, { protobuf, dropManagedFields: true })) {
      if (event.type === 'BOOKMARK') break;
      events++;
    }
    return events;
  };
  const streamRuns = { json: [], protobuf: [] };
  for (let rep = 0; rep < (process.env.NO_STREAM ? 0 : reps + 1); rep++) {
    for (const format of rep % 2 ? ['protobuf', 'json'] : ['json', 'protobuf']) {
      const before = { api: procCpuMs(apiServerPid), self: selfCpuMs(), at: performance.now() };
      const events = await streamAll(format === 'protobuf');
      const run = {
        wallMs: Math.round(performance.now() - before.at),
        apiServerCpuMs: procCpuMs(apiServerPid) - before.api,
        clientCpuMs: Math.round(selfCpuMs() - before.self),
        events,
      };
      if (rep > 0) streamRuns[format].push(run);
      console.error('stream', format, JSON.stringify(run));
    }
  }

  const variants = (process.env.VARIANTS ?? 'json,protobuf,protobuf-rv0').split(',');
  const runs = Object.fromEntries(variants.map((v) => [v, []]));
  let last = {};
  for (let rep = 0; rep < reps + 1; rep++) {
    for (const format of rep % 2 ? [...variants].reverse() : variants) {
      const before = {
        api: procCpuMs(apiServerPid),
        etcd: procCpuMs(etcdPid),
        self: selfCpuMs(),
        at: performance.now(),
      };
      const pages = await listAll(format);
      const run = {
        wallMs: Math.round(performance.now() - before.at),
        apiServerCpuMs: procCpuMs(apiServerPid) - before.api,
        etcdCpuMs: procCpuMs(etcdPid) - before.etcd,
        clientCpuMs: Math.round(selfCpuMs() - before.self),
        pages: pages.length,
        bytes: pages.reduce((n, p) => n + p.body.length, 0),
        contentType: pages[0].contentType,
      };
      if (rep > 0) runs[format].push(run); // the first round warms the API server's caches
      console.error(format, JSON.stringify(run));
      if (format === 'json' || format === 'protobuf') last[format] = pages;
    }
  }
  if (saveDir) {
    await mkdir(saveDir, { recursive: true });
    for (const format of Object.keys(last)) {
      await writeFile(join(saveDir, `${format}.bin`), framePages(last[format]));
    }
  }
  const decode = last.json && last.protobuf ? await decodeTimes(last) : undefined;
  const mean = (list, key) => Math.round(list.reduce((n, r) => n + r[key], 0) / list.length);
  const summary = Object.fromEntries(
    Object.entries(runs).map(([format, list]) => [
      format,
      {
        runs: list.length,
        wallMs: mean(list, 'wallMs'),
        apiServerCpuMs: mean(list, 'apiServerCpuMs'),
        etcdCpuMs: mean(list, 'etcdCpuMs'),
        clientCpuMs: mean(list, 'clientCpuMs'),
        bytes: list[0].bytes,
        contentType: list[0].contentType,
      },
    ]),
  );
  const streamSummary = Object.fromEntries(
    Object.entries(streamRuns).map(([format, list]) => [
      format,
      {
        runs: list.length,
        wallMs: mean(list, 'wallMs'),
        apiServerCpuMs: mean(list, 'apiServerCpuMs'),
        clientCpuMs: mean(list, 'clientCpuMs'),
      },
    ]),
  );
  const load = os.loadavg().map((n) => n.toFixed(2));
  console.log(
    JSON.stringify(
      {
        node: process.version,
        objects: count,
        pageSize: 500,
        load,
        runs,
        summary,
        decodeMs: decode,
        streamRuns,
        streamSummary,
      },
      null,
      2,
    ),
  );
  transport.close();
} finally {
  await env.stop();
}

/** The continue token of a page: JSON's metadata.continue, or read off the protobuf envelope. */
function continueOf(body, contentType) {
  if (!String(contentType).includes('protobuf'))
    return JSON.parse(body.toString('utf8')).metadata?.continue || undefined;
  return protobufContinue(body);
}

/** Minimal read of ListMeta.continue (field 3 of ListMeta, field 1 of the List) inside runtime.Unknown.raw (field 2). */
function protobufContinue(body) {
  const fields = (buf, start, end) => {
    const out = new Map();
    let i = start;
    const varint = () => {
      let v = 0;
      let shift = 0;
      for (;;) {
        const b = buf[i++];
        v += (b & 0x7f) * 2 ** shift;
        if (b < 0x80) return v;
        shift += 7;
      }
    };
    while (i < end) {
      const tag = varint();
      const wire = tag & 7;
      const field = tag >>> 3;
      if (wire === 0) varint();
      else if (wire === 2) {
        const len = varint();
        if (!out.has(field)) out.set(field, [i, i + len]);
        i += len;
      } else throw new Error(`wire type ${wire}`);
    }
    return out;
  };
  const raw = fields(body, 4, body.length).get(2);
  const listMeta = fields(body, raw[0], raw[1]).get(1);
  if (!listMeta) return undefined;
  const token = fields(body, listMeta[0], listMeta[1]).get(3);
  return token && token[1] > token[0] ? body.toString('utf8', token[0], token[1]) : undefined;
}

function framePages(pages) {
  const parts = [];
  for (const { body } of pages) {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(body.length);
    parts.push(len, body);
  }
  return Buffer.concat(parts);
}

async function decodeTimes(pages) {
  const time = (fn) => {
    const times = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      fn();
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    return Math.round(times[2]); // median of 5
  };
  const core = await import('@nestor/core');
  const schema = await core.loadProtobufSchema();
  // As the informer decodes: managedFields skipped on the wire (it drops them).
  const lean = schema.withoutManagedFields();
  return {
    json: time(() => pages.json.forEach((p) => JSON.parse(p.body.toString('utf8')))),
    protobuf: time(() => pages.protobuf.forEach((p) => core.decodeProtobufList(schema, p.body))),
    protobufWithoutManagedFields: time(() => pages.protobuf.forEach((p) => core.decodeProtobufList(lean, p.body))),
  };
}
