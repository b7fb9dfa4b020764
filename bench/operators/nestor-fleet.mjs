#!/usr/bin/env node
// The operator under test of bench/fleet.mjs: one Nestor process (createOperator, no Nest)
// over a fleet of member clusters named by kubeconfig Secrets in a namespace of the
// management cluster (KubeconfigSecrets, multicluster-runtime's label and key), doing the
// benchmark reconcile of every Widget in every engaged member: a server-side apply of a
// child ConfigMap and a status patch. Its multicluster-runtime peer is
// bench/multicluster-runtime/main.go. Line protocol: bench/operators/protocol.mjs (hello,
// ready, stats with the engaged clusters, exit).
//   node --expose-gc bench/operators/nestor-fleet.mjs --kubeconfig F --secrets-namespace NS
//     --members m-0=ns,m-1=ns,... [--workers 8] [--think-ms 0]
// --members names each member and the namespace its Widgets are in. When every member's is
// the same, one uniform controller (`clusters: 'members'`) runs in all of them. When members
// share an API server, each has a namespace of its own: a controller's namespace is the same
// in every cluster, so there is one controller per member (`clusters: name => name === m`),
// which gives each member what the uniform one would (its own instance, informer and lane).
import { FIELD_MANAGER, WIDGETS, childConfigMap, sleep, statusFor } from '../lib/common.mjs';
import { args, cpuUs, fail, memory, onCommands, send } from './protocol.mjs';

const { createOperator, generationChanged } = await import('@nestor/operator/runtime');
const { KubeconfigSecrets } = await import('@nestor/operator/fleet');

const { kubeconfig, 'secrets-namespace': secretsNamespace, members, workers, 'think-ms': think = '0' } = args();
const thinkMs = Number(think);
const namespaces = new Map(
  (members ?? '').split(',').map((entry) => {
    const [name, namespace] = entry.split('=');
    if (!name || !namespace) fail(new Error(`--members takes name=namespace,...; got ${JSON.stringify(members)}`));
    return [name, namespace];
  }),
);
send({ ev: 'hello', pid: process.pid, runtime: process.version });

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const logger = process.env.NESTOR_LOG
  ? { ...silent, warn: (m) => process.stderr.write(`warn ${m}\n`), error: (m) => process.stderr.write(`error ${m}\n`) }
  : silent;
const operator = await createOperator({
  kubeConfig: kubeconfig,
  readFlags: false,
  fieldManager: FIELD_MANAGER,
  concurrency: workers,
  metrics: { port: 0 },
  health: { port: 0 },
  logger: () => logger,
  fleet: { providers: [new KubeconfigSecrets({ namespace: secretsNamespace })] },
});
operator.client.kinds.register(WIDGETS);

const reconcile = async ({ object, client }) => {
  if (!object) return;
  await client.apply(childConfigMap(object, { ownerReference: false }), { owner: object });
  if (thinkMs > 0) await sleep(thinkMs);
  await client.patchStatus(object, statusFor(object));
};
const controller = { resource: WIDGETS, maxConcurrentReconciles: workers, predicates: [generationChanged], reconcile };
const distinct = new Set(namespaces.values());
if (distinct.size === 1) {
  operator.manager.addController({ ...controller, name: 'widgets', namespace: [...distinct][0], clusters: 'members' });
} else {
  for (const [member, namespace] of namespaces) {
    operator.manager.addController({
      ...controller,
      name: `widgets-${member}`,
      namespace,
      clusters: (c) => c === member,
    });
  }
}

try {
  await operator.start();
} catch (error) {
  fail(error);
}
send({ ev: 'ready' });
onCommands((command) => {
  if (command.cmd !== 'stats') return;
  const status = operator.fleet.status();
  send({
    ev: 'stats',
    ...memory(command.gc),
    cpuUs: cpuUs(),
    clusters: status.filter((m) => m.phase === 'engaged').length,
    members: status.length,
  });
});
