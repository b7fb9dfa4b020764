// The operator serves the conversion of the kind it reconciles and is restarted under load:
// the sample operator (sample-operator/dist/main.js, its Memcached controller and /convert)
// on a Memcached CRD that stores v1beta1, so every read of v1alpha1 goes through the
// operator itself. 200 Memcacheds reconciled; a writer changes sizes through both versions
// and adds Memcacheds without pause; the operator is SIGKILLed, down 2 s (writes refused:
// the API server can neither store nor serve the kind) and started again. Noted: seconds
// from its start until every write made is reconciled, writes refused, and whether its first
// LIST of the kind failed (its webhook server not serving yet: the deadlock on itself).
// Nestor only: the controller-runtime operator (bench/controller-runtime) serves no
// conversion of a kind it reconciles; its row notes that. The ConfigMap operators of the
// suite run beside it and converge on ctx.v as in any round.
import 'reflect-metadata';
import { customResourceDefinition } from '@nestor/operator';
import { parallel } from '@nestor/testing';
import { MemcachedV1beta1 } from '../../../sample-operator/dist/memcached/memcached-v1beta1.resource.js';
import { Memcached } from '../../../sample-operator/dist/memcached/memcached.resource.js';
import { converged, writeSize } from '../../../sample-operator/dist/test-support/memcached-writes.js';
import { SampleProcess } from '../../../sample-operator/dist/test-support/sample-process.js';

export const name = 'conversion-restart';
export const title = 'the operator serving its own kind’s conversion SIGKILLed and restarted while the kind is written';
export const modes = ['single'];
export const order = 95;
export const once = true;

const MEMCACHEDS = 200;
const BOUND_MS = 120_000;

let state;

export async function inject({ env, impl, note, log, sleep }) {
  if (impl !== 'nestor') {
    note('notMeasured', 'the controller-runtime operator serves no conversion of a kind it reconciles');
    return Date.now();
  }
  const crd = customResourceDefinition(Memcached, MemcachedV1beta1);
  await env.installCRDs([
    {
      ...crd,
      spec: { ...crd.spec, versions: crd.spec.versions.map((v) => ({ ...v, storage: v.name === 'v1beta1' })) },
    },
  ]);
  const webhooks = await env.installWebhooks({ conversions: [crd] });
  const namespace = await env.createNamespace('conversion');
  const start = () =>
    new SampleProcess({
      kubeconfigPath: env.kubeconfigPath,
      namespace,
      webhookPort: webhooks.port,
      webhookCertDir: webhooks.certDir,
    });
  state = { webhooks, operator: start() };
  const until = async (what, check) => {
    const deadline = Date.now() + BOUND_MS;
    for (;;) {
      if (await check().catch(() => false)) return;
      if (Date.now() > deadline) throw new Error(`${what} not within ${BOUND_MS} ms:\n${state.operator.tail()}`);
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
  const writer = (async () => {
    for (let turn = 0; writing; turn++) {
      const n = turn % 4 === 3 ? `late-${turn}` : names[turn % MEMCACHEDS];
      const size = 1 + ((turn * 7) % 5);
      try {
        await writeSize(env.client, namespace, n, size);
        sizes.set(n, size);
        written++;
      } catch {
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
  await until('every write reconciled', () => converged(env.client, namespace, sizes));
  const seconds = (Date.now() - restartedAt) / 1000;
  note('restartToConvergedSeconds', seconds);
  note('writesRefused', refused);
  note('memcacheds', sizes.size);
  note('firstListFailed', state.operator.lineOf(/(list|watch) of memcacheds.*failed/) >= 0);
  log(
    `conversion-restart: ${sizes.size} Memcacheds converged ${seconds.toFixed(1)} s after the restart; ${refused} writes refused`,
  );
  return Date.now();
}

export async function after() {
  if (!state) return;
  await state.operator.kill();
  await state.webhooks.uninstall().catch(() => {});
  state = undefined;
}
