import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { Transport, type KubeObject } from '@nestor/core';
import { TcpRelay, TestEnvironment, waitFor } from '@nestor/testing';
import { KubeClient } from '../client/kube-client.js';
import { ConfigMap } from '../client/kinds.js';
import { createConfigMap } from '../test-support/e2e-helpers.js';
import { Manager } from './manager.js';

// A reconcile's signal aborts on its timeout, a lost lease and shutdown past the grace
// period; the user need not pass it on: KubeClient's requests inside the reconcile carry it.
// Before, a request on a dead connection kept the aborted reconcile (and its object) held
// until the request's own deadline, 60 s later.

let env: TestEnvironment;
let relay: TcpRelay;
before(async () => {
  env = await TestEnvironment.start();
  relay = await TcpRelay.start(env.server);
});
after(async () => {
  await relay?.close();
  await env?.stop();
});

describe('an aborted reconcile', () => {
  it('cuts the KubeClient requests it made, without being handed the signal', async () => {
    const namespace = await env.createNamespace('abort');
    await createConfigMap(env.client, namespace, 'stuck');
    const transport = await Transport.fromKubeConfig(relay.kubeConfig(env.kubeConfig));
    const manager = new Manager({ transport });
    const kube = new KubeClient(transport, { informers: manager.informers });
    const settled: string[] = [];
    let silenced = false;
    manager.addController<V1ConfigMap & KubeObject>({
      name: 'abort',
      resource: ConfigMap,
      namespace,
      reconcileTimeoutMs: 1_000,
      reconcile: async ({ object }) => {
        if (!silenced) {
          silenced = true;
          relay.silence(); // this request, and every open connection, now hangs
        }
        try {
          await kube.patch(ConfigMap, { namespace, name: object!.metadata!.name! }, { data: { touched: 'yes' } });
          settled.push('written');
        } catch (error) {
          settled.push((error as Error).message);
          throw error;
        }
      },
    });
    await manager.start();
    try {
      // The timeout aborts the reconcile at 1 s; its hanging request must end with it, not at
      // the transport's 60 s deadline.
      const first = await waitFor(() => settled[0], { timeoutMs: 15_000, what: 'the aborted request to end' });
      assert.match(first, /did not finish within its timeout of 1000 ms/);
    } finally {
      await manager.stop();
      transport.close();
    }
  });
});
