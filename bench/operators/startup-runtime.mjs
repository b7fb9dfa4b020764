#!/usr/bin/env node
// Start-up milestones of Nestor's runtime (no Nest), for bench/startup.mjs: a Widget
// controller that owns ConfigMaps, started as a process. It prints, one JSON line each on
// stdout, with `at` on the wall clock (microseconds, comparable with the parent's):
//   imported (modules loaded, the first line of user code), first-object (the first object
//   of a LIST decoded into a cache), synced (every cache synced), reconcile (the first
//   reconcile starts). No /readyz: the runtime serves probes only when asked.
//   node bench/operators/startup-runtime.mjs --kubeconfig F --namespace NS
import { pathToFileURL } from 'node:url';
import { WIDGETS, nowUs } from '../lib/common.mjs';
import { args, fail, send } from './protocol.mjs';

// NESTOR_OPERATOR_DIST=path/to/dist runs another build of @nestor/operator (before/after).
const dist = process.env.NESTOR_OPERATOR_DIST;
const { ClusterConfig, ConfigMap, InformerCache, Manager, Transport } = await import(
  dist ? pathToFileURL(`${dist}/runtime-entry.js`).href : '@nestor/operator/runtime'
);
send({ ev: 'imported', at: nowUs() });

const { kubeconfig, namespace } = args();
const logger = process.env.NESTOR_LOG
  ? {
      debug:
        process.env.NESTOR_LOG === 'debug'
          ? (message) => process.stderr.write(`${new Date().toISOString()} debug ${message}\n`)
          : () => {},
      info: (message) => process.stderr.write(`${new Date().toISOString()} info ${message}\n`),
      warn: (message) => process.stderr.write(`${new Date().toISOString()} warn ${message}\n`),
      error: (message) => process.stderr.write(`${new Date().toISOString()} error ${message}\n`),
    }
  : undefined;
const transport = await Transport.fromKubeConfig(ClusterConfig.fromFile(kubeconfig), logger ? { logger } : {});
const informers = firstObjectOf(new InformerCache(transport, logger ? { logger } : {}));
const manager = new Manager({ transport, informers, ...(logger ? { logger } : {}) });
let reconciled = false;
manager.addController({
  name: 'widgets',
  resource: WIDGETS,
  namespace,
  owns: [ConfigMap],
  reconcile: async () => {
    if (reconciled) return;
    reconciled = true;
    send({ ev: 'reconcile', at: nowUs() });
  },
});
try {
  await manager.start();
} catch (error) {
  fail(error);
}
send({ ev: 'synced', at: nowUs() });
process.once('SIGTERM', () => manager.stop().then(() => process.exit(0)));

/** Reports the first object any of this cache's informers receives. */
function firstObjectOf(cache) {
  const acquire = cache.acquire.bind(cache);
  let seen = false;
  cache.acquire = (...rest) => {
    const handle = acquire(...rest);
    const subscription = handle.informer.events$.subscribe(() => {
      subscription.unsubscribe();
      if (seen) return;
      seen = true;
      send({ ev: 'first-object', at: nowUs() });
    });
    return handle;
  };
  return cache;
}
