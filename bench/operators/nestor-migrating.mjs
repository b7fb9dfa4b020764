#!/usr/bin/env node
// The operator under bench/migrate.mjs: createOperator, whose leader migrates the Widgets'
// CRD to its storage version (--writes-per-second, 0: unlimited), and one controller on the
// Widgets, at v1beta1 (served throughout), that keeps status.observed equal to spec.size,
// generation changes only unless --predicate false. /metrics over plain HTTP on --metrics-port.
//   node bench/operators/nestor-migrating.mjs --kubeconfig F --group G --metrics-port P
//     [--writes-per-second 100] [--predicate true] [--workers 8]
import { createOperator, generationChanged, silentLogger } from '@nestor/operator/runtime';
import { args, send } from './protocol.mjs';

const options = args();
const group = options.group;
const rate = Number(options['writes-per-second'] ?? 100);
const widgets = Object.freeze({ group, version: 'v1beta1', kind: 'Widget', plural: 'widgets', namespaced: true });
const operator = await createOperator({
  kubeConfig: options.kubeconfig,
  readFlags: false,
  fieldManager: 'bench-migrating',
  metrics: { port: Number(options['metrics-port']), host: '127.0.0.1', secure: false },
  health: { port: 0 },
  migrateStorageVersions: { kinds: [`widgets.${group}`], writesPerSecond: rate > 0 ? rate : Infinity },
  logger: (context) =>
    context === 'StorageVersionMigration'
      ? { ...silentLogger, info: (m) => process.stderr.write(`${m}\n`), warn: (m) => process.stderr.write(`${m}\n`) }
      : silentLogger,
});
operator.manager.addController({
  name: 'widgets',
  resource: widgets,
  maxConcurrentReconciles: options.workers,
  ...(options.predicate === 'false' ? {} : { predicates: [generationChanged] }),
  reconcile: async ({ object, client }) => {
    if (object && object.status?.observed !== object.spec?.size) {
      await client.patchStatus(object, { observed: object.spec.size });
    }
  },
});
await operator.start();
send({ ev: 'ready', pid: process.pid });
process.once('SIGTERM', () => void operator.stop().then(() => process.exit(0)));
