#!/usr/bin/env node
// The receiving side's ceiling: a stand-in API server in a child process streams watch
// events (~1.3 KiB ConfigMaps) as fast as the socket takes them, and this process runs them
// through Transport.stream -> watch() -> Informer. Reports events/s and CPU per event.
//   npm run build && node bench/micro/watch-throughput.mjs [events=100000]
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigMap, Informer, Transport } from '@nestor/operator/runtime';

const events = Number(process.argv[2] ?? 100_000);

if (process.argv[2] === '--serve') {
  // Stand-in API server: an empty LIST, then one WATCH that streams MODIFIED events of 1,000 objects.
  const count = Number(process.argv[3]);
  const payload = 'x'.repeat(860);
  const line = (i) =>
    JSON.stringify({
      type: i < 1000 ? 'ADDED' : 'MODIFIED',
      object: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: `cm-${i % 1000}`,
          namespace: 'bench',
          uid: `uid-${i % 1000}`,
          resourceVersion: String(10 + i),
          labels: { app: 'bench' },
          managedFields: [{ manager: 'bench', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1' }],
        },
        data: { payload },
      },
    }) + '\n';
  const server = createServer((req, res) => {
    if (!req.url.includes('watch=true')) {
      res.end(JSON.stringify({ kind: 'ConfigMapList', metadata: { resourceVersion: '10' }, items: [] }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    let i = 0;
    const pump = () => {
      while (i < count) if (!res.write(line(i++))) return res.once('drain', pump);
      res.end();
    };
    pump();
  });
  server.listen(0, '127.0.0.1', () => process.send(server.address().port));
} else {
  const child = fork(new URL(import.meta.url).pathname, ['--serve', String(events)]);
  const port = await new Promise((resolve) => child.once('message', resolve));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'bench' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const transport = await Transport.fromKubeConfig(kc);
  const informer = new Informer(transport, ConfigMap, { namespace: 'bench' });
  let seen = 0;
  let cpu;
  let started = 0;
  const done = new Promise((resolve) =>
    informer.events$.subscribe(() => {
      if (seen++ === 0) {
        cpu = process.cpuUsage();
        started = performance.now();
      }
      if (seen === events) resolve(performance.now());
    }),
  );
  informer.start();
  const ended = await done;
  const { user, system } = process.cpuUsage(cpu);
  const seconds = (ended - started) / 1000;
  console.log(
    JSON.stringify({
      node: process.version,
      events,
      eventsPerSecond: Math.round(events / seconds),
      cpuMicrosPerEvent: Number(((user + system) / events).toFixed(1)),
      cached: informer.size,
    }),
  );
  informer.stop();
  transport.close();
  child.kill();
}
