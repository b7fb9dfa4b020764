#!/usr/bin/env node
// TypeScript's floor: @kubernetes/client-node's own Informer (makeInformer) and generated
// API clients, with a hand-written work loop (dedup, one run per key, N workers). Same
// reconcile and protocol as bench/operators/nestor.mjs.
//   node --expose-gc bench/operators/client-node.mjs --kubeconfig F --namespace NS --mode sync|reconcile [--workers 8]
//     [--sync-kind configmap|widget]
import {
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  makeInformer,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { FIELD_MANAGER, GROUP, VERSION, WRITTEN_AT, childConfigMap, nowUs, statusFor } from '../lib/common.mjs';
import { Recorder, args, fail, onCommands, onSyncCommands, send } from './protocol.mjs';

const { kubeconfig, namespace, mode, workers, 'sync-kind': syncKind = 'configmap' } = args();
const kc = new KubeConfig();
kc.loadFromFile(kubeconfig);
const core = kc.makeApiClient(CoreV1Api);
const custom = kc.makeApiClient(CustomObjectsApi);
send({ ev: 'hello', pid: process.pid, runtime: process.version });

/** Starts an informer and restarts it after an error, as client-node's docs advise. */
function keepRunning(informer) {
  informer.on('error', () => setTimeout(() => informer.start().catch(() => {}), 1000));
  return informer.start();
}

if (mode === 'sync') {
  onSyncCommands(async () => {
    const informer =
      syncKind === 'widget'
        ? makeInformer(kc, `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/widgets`, () =>
            custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: 'widgets' }),
          )
        : makeInformer(kc, `/api/v1/namespaces/${namespace}/configmaps`, () =>
            core.listNamespacedConfigMap({ namespace }),
          );
    await keepRunning(informer);
    return () => ({ objects: informer.list(namespace).length });
  });
} else {
  const recorder = new Recorder();
  const informer = makeInformer(kc, `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/widgets`, () =>
    custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: 'widgets' }),
  );
  const applyOptions = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);
  const mergeOptions = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

  // The hand-written queue: FIFO of keys, dedup, a key added while it runs is run again after.
  const queued = new Set();
  const running = new Set();
  const again = new Set();
  let active = 0;
  let started = false;
  const enqueue = (name) => {
    if (running.has(name)) again.add(name);
    else queued.add(name);
    pump();
  };
  const pump = () => {
    while (started && active < workers && queued.size > 0) {
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
    const key = `${namespace}/${name}`;
    const widget = informer.get(name, namespace);
    if (!widget) return;
    recorder.start(key, widget.metadata.annotations?.[WRITTEN_AT]);
    let ok = false;
    try {
      const child = childConfigMap(widget);
      await core.patchNamespacedConfigMap(
        { name: child.metadata.name, namespace, body: child, fieldManager: FIELD_MANAGER, force: true },
        applyOptions,
      );
      await custom.patchNamespacedCustomObjectStatus(
        {
          group: GROUP,
          version: VERSION,
          namespace,
          plural: 'widgets',
          name,
          body: { status: statusFor(widget) },
          fieldManager: FIELD_MANAGER,
        },
        mergeOptions,
      );
      ok = true;
    } catch {
      enqueue(name); // retry (no backoff: errors are not expected here)
    } finally {
      recorder.finish(key, ok);
    }
  };

  // GenerationChangedPredicate by hand: the informer's update callback has no old object.
  const generations = new Map();
  const onChange = (widget) => {
    const { name, generation } = widget.metadata;
    if (generations.get(name) === generation) return;
    generations.set(name, generation);
    enqueue(name);
  };
  informer.on('add', onChange);
  informer.on('update', onChange);
  informer.on('delete', (widget) => generations.delete(widget.metadata.name));
  try {
    await keepRunning(informer);
  } catch (error) {
    fail(error);
  }
  started = true;
  pump();
  send({ ev: 'ready', at: nowUs(), startupMs: performance.now() });
  onCommands((command) => recorder.command(command));
}
