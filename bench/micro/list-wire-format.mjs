#!/usr/bin/env node
// What the wire format of a paginated LIST costs, JSON against protobuf, on the real API server.
//   npm run build && node bench/micro/list-wire-format.mjs [objects=50000] [reps=3] [--save DIR]
// Creates the ConfigMaps (~1 KiB of JSON each), then lists them in pages of 500 (as the
// informer does), alternating the two formats: wall time, kube-apiserver's and etcd's CPU
// (/proc/<pid>/stat), this process's CPU, bytes. Then decodes the pages of the last round:
// JSON.parse against Nestor's protobuf decoder. --save keeps the pages for offline runs.
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
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

  const listAll = async (accept) => {
    const pages = [];
    let token;
    do {
      const res = await transport.request('GET', path, { query: { limit: 500, continue: token }, accept });
      if (res.status !== 200) throw new Error(`LIST answered ${res.status}: ${res.body.toString().slice(0, 300)}`);
      pages.push({ contentType: res.headers['content-type'], body: res.body });
      token = continueOf(res.body, res.headers['content-type']);
    } while (token);
    return pages;
  };

  const runs = { json: [], protobuf: [] };
  let last = {};
  for (let rep = 0; rep < reps + 1; rep++) {
    for (const format of rep % 2 ? ['protobuf', 'json'] : ['json', 'protobuf']) {
      const before = {
        api: procCpuMs(apiServerPid),
        etcd: procCpuMs(etcdPid),
        self: selfCpuMs(),
        at: performance.now(),
      };
      const pages = await listAll(FORMATS[format]);
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
      last[format] = pages;
    }
  }
  if (saveDir) {
    await mkdir(saveDir, { recursive: true });
    for (const format of Object.keys(last)) {
      await writeFile(join(saveDir, `${format}.bin`), framePages(last[format]));
    }
  }
  const decode = await decodeTimes(last);
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
        decodeMs: decode[format],
      },
    ]),
  );
  console.log(JSON.stringify({ node: process.version, objects: count, pageSize: 500, runs, summary }, null, 2));
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
  const out = { json: time(() => pages.json.forEach((p) => JSON.parse(p.body.toString('utf8')))) };
  const core = await import('@nestor/core');
  if (core.loadProtobufSchema) {
    const schema = await core.loadProtobufSchema();
    out.protobuf = time(() => pages.protobuf.forEach((p) => core.decodeProtobufList(schema, p.body)));
  }
  return out;
}
