// The sample operator serves the conversion of the kind it reconciles, and is restarted
// (SIGKILL, then started again as kubelet would) while Memcacheds are being written. The CRD
// stores v1beta1 here (a storage migration under way), so every Memcached the operator reads
// at v1alpha1 goes through its own /convert: while it is down the API server can neither
// store nor serve the kind, and when it comes back its webhook server must answer before its
// informers list the kind, or its first LIST fails on itself. It runs as the real process
// (dist/main.js), on a control plane of its own: the CRD's storage and conversion are changed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { customResourceDefinition } from '@nestor/operator';
import { TestEnvironment, waitFor, type LocalWebhooks } from '@nestor/testing';
import { converged as allConverged, memcacheds, unconverged, writeSize } from '../test-support/memcached-writes.js';
import { SampleProcess } from '../test-support/sample-process.js';
import { MemcachedV1beta1 } from './memcached-v1beta1.resource.js';
import { Memcached } from './memcached.resource.js';

const OBJECTS = 40;

let env: TestEnvironment;
let webhooks: LocalWebhooks;
let ns: string;

const sample = () =>
  new SampleProcess({
    kubeconfigPath: env.kubeconfigPath,
    namespace: ns,
    webhookPort: webhooks.port,
    webhookCertDir: webhooks.certDir,
  });

before(async () => {
  const crd = customResourceDefinition(Memcached, MemcachedV1beta1);
  const migrating = {
    ...crd,
    spec: { ...crd.spec, versions: crd.spec.versions.map((v) => ({ ...v, storage: v.name === 'v1beta1' })) },
  };
  env = await TestEnvironment.start({ useExistingCluster: false, crds: [migrating] });
  ns = await env.createNamespace('memcached-restart');
  webhooks = await env.installWebhooks({ conversions: [crd] });
});
after(async () => {
  await webhooks?.uninstall().catch(() => {});
  await env?.stop();
});

describe('the sample operator, serving its own kind’s conversion, restarted while it is written', () => {
  it('serves /convert before its informers list the kind, and converges on every write made during the restart', async (t) => {
    let operator = sample();
    const sizes = new Map<string, number>();
    try {
      // Until the operator serves /convert, nothing of the kind can be stored.
      await waitFor(
        async () => {
          await writeSize(env.client, ns, 'cache-0', 1);
          return true;
        },
        { timeoutMs: 30_000, what: 'the first Memcached stored through the operator’s conversion' },
      ).catch((error: Error) => assert.fail(`${error.message}\n${operator.tail()}`));
      sizes.set('cache-0', 1);
      for (let i = 1; i < OBJECTS; i++) {
        await writeSize(env.client, ns, `cache-${i}`, 1 + (i % 3));
        sizes.set(`cache-${i}`, 1 + (i % 3));
      }
      await waitFor(() => allConverged(env.client, ns, sizes), {
        timeoutMs: 60_000,
        what: 'the first reconciles',
      }).catch((error: Error) => assert.fail(`${error.message}\n${operator.tail()}`));

      // Load: a writer changing sizes through both versions and adding Memcacheds, without
      // pause; a write refused (the conversion is away) is tried again on the next turn.
      let writing = true;
      let refused = 0;
      let written = 0;
      // Writes through v1alpha1 begun after the restart and stored: each went through the new
      // process's /convert (the old one has exited). Writes through v1beta1, the storage
      // version, need no conversion: they are stored all through the restart.
      let restarted = false;
      let convertedAfterRestart = 0;
      // Names whose last write was refused: the API server may have stored it all the same (a
      // write through v1alpha1 is converted again for its answer, and the conversion may have
      // gone away in between), so what it holds is unknown until written again.
      const unsure = new Map<string, number>();
      const writer = (async () => {
        for (let turn = 0; writing; turn++) {
          const name = turn % 4 === 3 ? `late-${turn}` : `cache-${turn % OBJECTS}`;
          const size = 1 + ((turn * 7) % 5);
          const afterRestart = restarted;
          try {
            const version = await writeSize(env.client, ns, name, size);
            if (afterRestart && version === 'v1alpha1') convertedAfterRestart++;
            sizes.set(name, size);
            unsure.delete(name);
            written++;
          } catch {
            unsure.set(name, size);
            refused++;
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        }
      })();

      await new Promise((resolve) => setTimeout(resolve, 500));
      await operator.kill();
      await waitFor(() => refused > 5, { what: 'writes refused while the conversion is down' });
      const restartedAt = Date.now();
      operator = sample();
      restarted = true;
      await waitFor(() => convertedAfterRestart > 10, {
        timeoutMs: 60_000,
        what: 'writes through v1alpha1 stored again (/convert answering) after the restart',
      }).catch((error: Error) => assert.fail(`${error.message}\n${operator.tail()}`));
      writing = false;
      await writer;
      let storedThoughRefused = 0;
      for (const [name, tried] of unsure) {
        const stored = await env.client
          .request<Memcached>('GET', memcacheds(ns, 'v1alpha1', name))
          .catch(() => undefined);
        if (stored?.spec.size === tried && sizes.get(name) !== tried) storedThoughRefused++;
        const size = sizes.get(name) ?? 1;
        await writeSize(env.client, ns, name, size);
        sizes.set(name, size);
      }

      await waitFor(() => allConverged(env.client, ns, sizes), {
        timeoutMs: 60_000,
        what: 'every write reconciled',
      }).catch(async (error: Error) => {
        const left = await unconverged(env.client, ns, sizes).catch((e: Error) => [e.message]);
        assert.fail(`${error.message}; not converged: ${left.join('; ')}\n${operator.tail()}`);
      });
      t.diagnostic(
        `restarted: /convert served ${operator.msUntil(/serving .*\/convert/)} ms after the spawn, manager started ${operator.msUntil(/manager started/)} ms`,
      );
      t.diagnostic(
        `${written} writes, ${refused} refused while the conversion was down (${storedThoughRefused} of them stored all the same); ${sizes.size} Memcacheds converged ${Date.now() - restartedAt} ms after the restart`,
      );
      // The order that keeps it from waiting on itself: /convert served, then the manager's
      // informers list, and never a failed LIST or WATCH of the kind.
      const serving = operator.lineOf(/serving .*\/convert/);
      const started = operator.lineOf(/manager started/);
      assert.ok(serving >= 0 && started > serving, `/convert served before the manager started:\n${operator.tail()}`);
      assert.equal(
        operator.lineOf(/(list|watch) of memcacheds.*failed/),
        -1,
        `no failed LIST or WATCH of the kind:\n${operator.tail()}`,
      );
    } finally {
      await operator.kill();
    }
  });
});
