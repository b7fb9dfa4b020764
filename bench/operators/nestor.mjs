#!/usr/bin/env node
// The operator under test: Nestor's runtime (Manager, ManagedController, InformerCache, HttpKubeClient)
// through @nestor/operator/runtime, which loads no Nest module, doing the benchmark reconcile. Driven by bench/run.mjs.
//   node --expose-gc bench/operators/nestor.mjs --kubeconfig F --namespace NS --mode sync|reconcile [--workers 8]
//     [--sync-kind configmap|widget] [--owns configmap]
//   --owns configmap: the controller owns ConfigMaps (bench/run.mjs --scenarios owned); its reconcile never reads them
import { pathToFileURL } from 'node:url';
import { FIELD_MANAGER, WIDGETS, WRITTEN_AT, childConfigMap, nowUs, statusFor } from '../lib/common.mjs';
import { Recorder, args, fail, onCommands, onSyncCommands, send } from './protocol.mjs';
import { Timings } from './timings.mjs';

// NESTOR_OPERATOR_DIST=path/to/dist runs another build of @nestor/operator (before/after comparisons).
// NESTOR_STREAMING_LIST=true syncs by a streamed list (WatchList) where the API server offers it.
// NESTOR_PROTOBUF=false lists and watches built-in kinds in JSON (bench/run.mjs --impls nestor-json).
// NESTOR_HTTP2=true|false sets the transport's http2 option (unset: the default); DISABLE_HTTP2=1 works too.
// BENCH_TIMINGS=file.json writes where each second's reconciles waited (bench/operators/timings.mjs).
const dist = process.env.NESTOR_OPERATOR_DIST;
const operator = await import(dist ? pathToFileURL(`${dist}/runtime-entry.js`).href : '@nestor/operator/runtime');
const {
  ClusterConfig,
  ConfigMap,
  InformerCache,
  Manager,
  OperatorMetrics,
  Transport,
  createOperator,
  generationChanged,
} = operator;
// Builds before the client seam (issue 26) call the HTTP client KubeClient.
const HttpKubeClient = operator.HttpKubeClient ?? operator.KubeClient;
/** Start-up phases (ms since process start): modules loaded, then the manager started. */
const importedMs = performance.now();

const { kubeconfig, namespace, mode, workers, 'sync-kind': syncKind = 'configmap', owns } = args();
// NESTOR_LOG=1: the runtime's and the transport's warnings and errors on stderr (stdout is the protocol's).
const logger = process.env.NESTOR_LOG
  ? Object.fromEntries(
      ['debug', 'info', 'warn', 'error'].map((level) => [
        level,
        level === 'warn' || level === 'error'
          ? (message) => process.stderr.write(`${new Date().toISOString()} ${level} ${message}\n`)
          : () => {},
      ]),
    )
  : undefined;
const transportOptions = {
  ...(logger ? { logger } : {}),
  protobuf: process.env.NESTOR_PROTOBUF !== 'false',
  ...(process.env.NESTOR_HTTP2 ? { http2: process.env.NESTOR_HTTP2 === 'true' } : {}),
};
send({ ev: 'hello', pid: process.pid, runtime: process.version });

/**
 * The manager and the client its reconciles write with: createOperator's (no metrics or
 * probe ports: the bench measures the controllers), or, for builds before it, made by hand.
 */
async function managerAndClient() {
  if (createOperator) {
    const built = await createOperator({
      kubeConfig: kubeconfig,
      readFlags: false,
      fieldManager: FIELD_MANAGER,
      concurrency: workers,
      transport: transportOptions,
      metrics: { port: 0 },
      health: { port: 0 },
      ...(logger ? { logger: () => logger } : { logger: () => silent }),
    });
    built.client.kinds.register(WIDGETS);
    return { manager: built.manager, kube: undefined };
  }
  // As createOperator makes it: the manager's client (the run's, as request.client) and Prometheus metrics.
  const transport = await Transport.fromKubeConfig(ClusterConfig.fromFile(kubeconfig), transportOptions);
  const manager = new Manager({
    transport,
    concurrency: workers,
    fieldManager: FIELD_MANAGER,
    ...(OperatorMetrics ? { metrics: new OperatorMetrics() } : {}),
    ...(logger ? { logger } : {}),
  });
  const kinds = manager.client?.kinds;
  kinds?.register(WIDGETS);
  // Builds before the run's client (request.client) write through a client of their own.
  const own = manager.client
    ? undefined
    : new HttpKubeClient(transport, { informers: manager.informers, fieldManager: FIELD_MANAGER, kinds });
  return { manager, kube: own };
}
const silent = { debug() {}, info() {}, warn() {}, error() {} };

if (mode === 'sync') {
  const transport = await Transport.fromKubeConfig(ClusterConfig.fromFile(kubeconfig), transportOptions);
  onSyncCommands(async () => {
    const cache = new InformerCache(transport, {
      ...(process.env.NESTOR_STREAMING_LIST === 'true' ? { streamingList: true } : {}),
    });
    const { informer } = cache.acquire(syncKind === 'widget' ? WIDGETS : ConfigMap, { namespace });
    await informer.whenSynced();
    return () => ({ objects: informer.size, requests: transport.stats.requests });
  });
} else {
  const recorder = new Recorder();
  const timings = new Timings(() => recorder.inFlight);
  const { manager, kube: ownClient } = await managerAndClient();
  manager.addController({
    name: 'widgets',
    resource: WIDGETS,
    namespace,
    maxConcurrentReconciles: workers,
    predicates: [generationChanged],
    ...(owns === 'configmap' ? { owns: [ConfigMap] } : {}),
    reconcile: async ({ key, object, client }) => {
      // The run's own client (fenced, cut by the run's signal); a hand-made one for builds without it.
      const kube = client ?? ownClient;
      recorder.start(key, object.metadata.annotations?.[WRITTEN_AT]);
      timings.started(object.metadata.annotations?.[WRITTEN_AT]);
      let ok = false;
      try {
        await timings.request('apply', () =>
          kube.apply(childConfigMap(object, { ownerReference: false }), { owner: object }),
        );
        await timings.request('status', () => kube.patchStatus(object, statusFor(object)));
        ok = true;
      } finally {
        recorder.finish(key, ok);
        timings.finished();
      }
    },
  });
  try {
    await manager.start();
  } catch (error) {
    fail(error);
  }
  send({ ev: 'ready', at: nowUs(), startupMs: performance.now(), importedMs });
  onCommands((command) => {
    if (command.cmd === 'stats') timings.write();
    return recorder.command(command);
  });
}
