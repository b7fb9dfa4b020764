#!/usr/bin/env node
// The limit: the API server alone. No watch, no cache. The load generator tells this
// process about every object it wrote, over the pipe (zero watch latency, zero decode), and
// this process makes the same writes a reconcile makes, with a plain pooled keep-alive
// client (one Transport, no framework). In sync mode it pages through the same LIST without
// decoding the items. Same protocol as the operators.
//   node --expose-gc bench/operators/apiserver.mjs --kubeconfig F --namespace NS --mode sync|reconcile [--workers 8]
//     [--sync-kind configmap|widget]
import { ClusterConfig, Transport } from '@nestor/core';
import { FIELD_MANAGER, childConfigMap, configMapsPath, nowUs, statusFor, widgetsPath } from '../lib/common.mjs';
import { Recorder, args, cpuUs, memory, onCommands, send } from './protocol.mjs';

const { kubeconfig, namespace, mode, workers, 'sync-kind': syncKind = 'configmap' } = args();
const transport = await Transport.fromKubeConfig(ClusterConfig.fromFile(kubeconfig));
send({ ev: 'hello', pid: process.pid, runtime: process.version });

if (mode === 'sync') {
  onCommands(async (command) => {
    if (command.cmd === 'start') {
      const before = memory(true);
      const cpuBefore = cpuUs();
      const started = nowUs();
      let objects = 0;
      let token;
      do {
        const path = syncKind === 'widget' ? widgetsPath(namespace) : configMapsPath(namespace);
        const { status, body } = await transport.request('GET', path, {
          query: { limit: 500, continue: token },
        });
        if (status !== 200) throw new Error(`LIST: HTTP ${status}: ${body.toString('utf8', 0, 300)}`);
        // Only the list's own metadata is read (first for built-in kinds, last for custom
        // resources, whose keys come sorted); the items stay bytes.
        const ends = body.toString('utf8', 0, 2048) + body.toString('utf8', Math.max(0, body.length - 2048));
        token = /"continue":"([^"]+)"/.exec(ends)?.[1];
        objects += countItems(body);
      } while (token);
      const synced = nowUs();
      send({
        ev: 'synced',
        objects,
        syncUs: synced - started,
        cpuUs: cpuUs() - cpuBefore,
        before,
        after: memory(true),
      });
    } else if (command.cmd === 'stats') {
      send({ ev: 'stats', ...memory(command.gc), cpuUs: cpuUs(), at: nowUs() });
    }
  });
} else {
  const recorder = new Recorder();
  // The latest word on each object, and a queue with the operators' semantics.
  const latest = new Map();
  const queued = new Set();
  const running = new Set();
  const again = new Set();
  let active = 0;
  const pump = () => {
    while (active < workers && queued.size > 0) {
      const name = queued.values().next().value;
      queued.delete(name);
      running.add(name);
      active++;
      void reconcile(name).finally(() => {
        active--;
        running.delete(name);
        if (again.delete(name)) queued.add(name);
        pump();
      });
    }
  };
  const reconcile = async (name) => {
    const { widget, writtenAt } = latest.get(name);
    const key = `${namespace}/${name}`;
    recorder.start(key, writtenAt);
    let ok = false;
    try {
      const child = childConfigMap(widget);
      await transport.json('PATCH', configMapsPath(namespace, child.metadata.name), {
        body: child,
        contentType: 'application/apply-patch+yaml',
        query: { fieldManager: FIELD_MANAGER, force: true },
      });
      await transport.json('PATCH', `${widgetsPath(namespace, name)}/status`, {
        body: { status: statusFor(widget) },
        contentType: 'application/merge-patch+json',
        query: { fieldManager: FIELD_MANAGER },
      });
      ok = true;
    } finally {
      recorder.finish(key, ok);
    }
  };
  send({ ev: 'ready', at: nowUs(), startupMs: performance.now() });
  onCommands((command) => {
    if (command.cmd !== 'obj') return recorder.command(command);
    // {cmd: 'obj', name, uid, generation, size, round, writtenAt}: the generator's write, as written.
    const widget = {
      metadata: { name: command.name, namespace, uid: command.uid, generation: command.generation },
      spec: { size: command.size, round: command.round },
    };
    latest.set(command.name, { widget, writtenAt: command.writtenAt });
    if (running.has(command.name)) again.add(command.name);
    else queued.add(command.name);
    pump();
  });
}

/** Items in a LIST page without parsing it: each ConfigMap item carries one "uid". */
function countItems(body) {
  let count = 0;
  const needle = Buffer.from('"uid":"');
  for (let i = body.indexOf(needle); i >= 0; i = body.indexOf(needle, i + 1)) count++;
  return count;
}
