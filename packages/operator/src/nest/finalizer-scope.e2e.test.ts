import 'reflect-metadata';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1ConfigMap } from '../client/kinds.js';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { ConfigMap, Controller, Finalizer, Reconcile } from '../index.js';
import { configMapsPath, createConfigMap } from '../test-support/e2e-helpers.js';
import { bootOperatorApp } from '../test-support/operator-app.js';

// A finalizer on a kind the application does not define, watched cluster-wide, would land
// on every such object in the cluster (and block every namespace deletion once the operator
// is gone). It is refused at start-up unless scoped or explicitly unscoped.

let env: TestEnvironment;
before(async () => {
  env = await TestEnvironment.start();
});
after(() => env.stop());

function boot(providers: unknown[], namespace?: string) {
  return bootOperatorApp({ kubeConfig: env.kubeConfig, ...(namespace ? { namespace } : {}), providers });
}

const finalizersOf = async (namespace: string, name: string) =>
  (await env.client.request<V1ConfigMap>('GET', configMapsPath(namespace, name))).metadata?.finalizers ?? [];

describe('a finalizer on a kind the application does not define', () => {
  it('is refused at start-up when the controller watches every namespace, and touches nothing', async () => {
    @Controller(ConfigMap)
    class EveryConfigMap {
      @Reconcile() reconcile(): void {}
      @Finalizer() cleanup(): void {}
    }
    const bystanders = await env.createNamespace('bystander');
    await createConfigMap(env.client, bystanders, 'not-yours');
    await assert.rejects(
      boot([EveryConfigMap]),
      /EveryConfigMap has a @Finalizer\(\) on configmaps, a kind this application does not define.*@Finalizer\(\{ unscoped: true \}\)/,
    );
    assert.deepEqual(await finalizersOf(bystanders, 'not-yours'), []);
  });

  it('is accepted when the controller is scoped to a namespace, and lands only there', async () => {
    @Controller(ConfigMap)
    class OneNamespace {
      @Reconcile() reconcile(): void {}
      @Finalizer('example.com/cleanup') cleanup(): void {}
    }
    const mine = await env.createNamespace('mine');
    const other = await env.createNamespace('other');
    await createConfigMap(env.client, mine, 'mine');
    await createConfigMap(env.client, other, 'theirs');
    const app = await boot([OneNamespace], mine);
    try {
      await waitFor(async () => (await finalizersOf(mine, 'mine')).includes('example.com/cleanup'), {
        timeoutMs: 20_000,
        what: 'the finalizer on the ConfigMap of the watched namespace',
      });
      assert.deepEqual(await finalizersOf(other, 'theirs'), []);
    } finally {
      await app.close();
    }
  });

  it('is accepted cluster-wide with @Finalizer({ unscoped: true })', async () => {
    @Controller(ConfigMap, { labelSelector: 'finalize-me=yes' })
    class Selected {
      @Reconcile() reconcile(): void {}
      @Finalizer() cleanup(): void {}
    }
    @Controller(ConfigMap, { name: 'everything' })
    class Acknowledged {
      @Reconcile() reconcile(): void {}
      @Finalizer({ name: 'example.com/everything', unscoped: true }) cleanup(): void {}
    }
    // Booting is the assertion: both are allowed. Nothing is created, so nothing is finalized.
    const app = await boot([Selected, Acknowledged]);
    await app.close();
  });
});
