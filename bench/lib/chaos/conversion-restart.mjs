// The operator serves the conversion of the kind it reconciles and is restarted under load:
// a Memcached CRD that stores v1beta1, so every read of v1alpha1 goes through the operator
// itself. For Nestor the sample operator (sample-operator/dist/main.js, its Memcached
// controller and /convert); for controller-runtime its kubebuilder peer (bench/controller-runtime
// -mode memcached: the same kind, conversion, reconcile and single worker, memcached.go).
// 200 Memcacheds reconciled; a writer changes sizes through both versions and adds
// Memcacheds without pause; the operator is SIGKILLed, down 2 s (writes refused: the API
// server can neither store nor serve the kind) and started again. The row shows the seconds
// from its start until every write made is reconciled; noted beside it: writes refused, and
// whether the restarted process's first LIST or WATCH of the kind failed (its webhook server
// not serving yet: the deadlock on itself). The ConfigMap operators of the suite run beside
// it and converge on ctx.v as in any round.
import 'reflect-metadata';
import { customResourceDefinition } from '@nestor/operator';
import { parallel } from '@nestor/testing';
import { MemcachedV1beta1 } from '../../../sample-operator/dist/memcached/memcached-v1beta1.resource.js';
import { Memcached } from '../../../sample-operator/dist/memcached/memcached.resource.js';
import { converged, writeSize } from '../../../sample-operator/dist/test-support/memcached-writes.js';
import { SampleProcess } from '../../../sample-operator/dist/test-support/sample-process.js';
import { ensureGoOperator } from '../go-build.mjs';
import { GoMemcachedProcess } from './_memcached-peer.mjs';

export const name = 'conversion-restart';
export const title =
  'the operator serving its own kind’s conversion SIGKILLed and restarted while the kind is written (seconds from its start until every write is reconciled)';
export const modes = ['single'];
export const order = 95;
export const once = true;
/** The row shows this note, not the ConfigMaps' convergence on ctx.v. */
export const figure = 'restartToConvergedSeconds';

const MEMCACHEDS = 200;
const BOUND_MS = 120_000;
/** A failed LIST or WATCH of the kind in the operator's log: Nestor's, or client-go's reflector's. */
const FAILED_LIST = {
  nestor: /(list|watch) of memcacheds.*failed/,
  'controller-runtime': /failed to (list|watch).*Memcached/i,
};

let state;

export async function inject({ env, impl, note, log, sleep }) {
  const crd = customResourceDefinition(Memcached, MemcachedV1beta1);
  await env.installCRDs([
    {
      ...crd,
      spec: { ...crd.spec, versions: crd.spec.versions.map((v) => ({ ...v, storage: v.name === 'v1beta1' })) },
    },
  ]);
  const webhooks = await env.installWebhooks({ conversions: [crd] });
  const namespace = await env.createNamespace('conversion');
  const options = {
    kubeconfigPath: env.kubeconfigPath,
    namespace,
    webhookPort: webhooks.port,
    webhookCertDir: webhooks.certDir,
  };
  // Built (or found in the cache) before anything is timed.
  const goBinary = impl === 'controller-runtime' ? await ensureGoOperator() : undefined;
  const start = () => (goBinary ? new GoMemcachedProcess(goBinary, options) : new SampleProcess(options));
  state = { webhooks, operator: start() };
  const until = async (what, check) => {
    const deadline = Date.now() + BOUND_MS;
    for (;;) {
      if (await check().catch(() => false)) return;
      if (Date.now() > deadline) {
        const left = await unconverged(env.client, namespace, sizes).catch(
          (error) => `the check failed: ${error.message}`,
        );
        throw new Error(`${what} not within ${BOUND_MS} ms (${left}):\n${state.operator.tail()}`);
      }
      await sleep(250);
    }
  };
  const sizes = new Map();
  const names = Array.from({ length: MEMCACHEDS }, (_, i) => `cache-${i}`);
  await until('the first Memcached stored through /convert', () =>
    writeSize(env.client, namespace, names[0], 1).then(() => true),
  );
  await parallel(names, 16, (n) => writeSize(env.client, namespace, n, 1));
  for (const n of names) sizes.set(n, 1);
  await until('the first reconciles', () => converged(env.client, namespace, sizes));

  let writing = true;
  let refused = 0;
  let written = 0;
  // Names whose last write was refused: the API server may have stored it all the same (a
  // write through v1alpha1 is converted again for its response, and the conversion may have
  // gone away in between), so the size it holds is unknown until written again.
  const unsure = new Set();
  const writer = (async () => {
    for (let turn = 0; writing; turn++) {
      const n = turn % 4 === 3 ? `late-${turn}` : names[turn % MEMCACHEDS];
      const size = 1 + ((turn * 7) % 5);
      try {
        await writeSize(env.client, namespace, n, size);
        sizes.set(n, size);
        unsure.delete(n);
        written++;
      } catch {
        unsure.add(n);
        refused++;
        await sleep(50);
      }
    }
  })();
  await sleep(1_000);
  await state.operator.kill();
  await sleep(2_000);
  const restartedAt = Date.now();
  state.operator = start();
  const writtenAtRestart = written;
  await until('writes stored again', async () => written > writtenAtRestart + 50);
  writing = false;
  await writer;
  for (const n of unsure) {
    const size = sizes.get(n) ?? 1;
    await until(`${n} written again`, () => writeSize(env.client, namespace, n, size).then(() => true));
    sizes.set(n, size);
  }
  await until('every write reconciled', () => converged(env.client, namespace, sizes));
  const seconds = (Date.now() - restartedAt) / 1000;
  note('restartToConvergedSeconds', seconds);
  note('writesRefused', refused);
  note('memcacheds', sizes.size);
  note('firstListFailed', state.operator.lineOf(FAILED_LIST[impl]) >= 0);
  log(
    `conversion-restart: ${sizes.size} Memcacheds converged ${seconds.toFixed(1)} s after the restart; ${refused} writes refused`,
  );
  return Date.now();
}

/** What converged() found wrong, for the error: the count, and the first few Memcacheds off. */
async function unconverged(client, namespace, sizes) {
  const base = `/apis/cache.example.com/v1alpha1/namespaces/${namespace}/memcacheds`;
  const [list, deployments] = await Promise.all([
    client.request('GET', base),
    client.request('GET', `/apis/apps/v1/namespaces/${namespace}/deployments`),
  ]);
  const replicas = new Map(deployments.items.map((d) => [d.metadata.name, d.spec?.replicas]));
  const off = list.items
    .filter(
      (m) =>
        m.spec.size !== sizes.get(m.metadata.name) ||
        replicas.get(m.metadata.name) !== m.spec.size ||
        m.status?.observedGeneration !== m.metadata.generation,
    )
    .map(
      (m) =>
        `${m.metadata.name}: size ${m.spec.size}, written ${sizes.get(m.metadata.name)}, replicas ${replicas.get(m.metadata.name)}, generation ${m.metadata.generation}, observed ${m.status?.observedGeneration}`,
    );
  return `${list.items.length} Memcacheds of ${sizes.size} written, ${off.length} off: ${off.slice(0, 5).join('; ')}`;
}

export async function after() {
  if (!state) return;
  await state.operator.kill();
  await state.webhooks.uninstall().catch(() => {});
  state = undefined;
}
