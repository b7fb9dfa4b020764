// A manager started while the API server is down and then starting: a kube-apiserver that
// starts accepts connections and holds their requests, a custom resource's LIST for seconds
// after its /readyz says 200 (bench/startup.mjs's restart case: the first reconcile came
// 3.6-4.0 s after the server answered). An ApiProxy in front of the real server plays that
// server: it holds the first LIST and answers /readyz 500 until the test says it is ready.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubeApiError, Transport } from '@nestor/core';
import { ApiProxy, TestEnvironment, waitFor } from '@nestor/testing';
import { ConfigMap } from '../../client/kinds.js';
import { configMapsPath, createConfigMap } from '../../test-support/e2e-helpers.js';
import { InformerCache } from '../cache/informer-cache.js';
import { Manager } from './manager.js';

let env: TestEnvironment;
let proxy: ApiProxy;
before(async () => {
  env = await TestEnvironment.start();
  proxy = await ApiProxy.start(env.kubeConfig);
});
after(async () => {
  await proxy?.close();
  await env?.stop();
});

describe('a manager started during an outage', () => {
  it('sends its held LIST again once the outage gate finds the server ready, and reconciles', async () => {
    const namespace = await env.createNamespace('held-list');
    await createConfigMap(env.client, namespace, 'waiting');
    const path = configMapsPath(namespace);
    let ready = false;
    proxy.inject({
      match: (r) => !ready && r.path === '/readyz',
      fault: { answer: { status: 500, body: { kind: 'Status', status: 'Failure', code: 500 } } },
      times: Number.MAX_SAFE_INTEGER,
    });
    const held = proxy.inject({ match: (r) => !r.watch && r.path === path, fault: { hold: true } });
    const transport = await Transport.fromKubeConfig(proxy.kubeConfig(env.kubeConfig));
    // A backoff no test would wait for: only the gate's probe may end the wait.
    const informers = new InformerCache(transport, { backoff: { initialMs: 600_000, maxMs: 600_000 } });
    const manager = new Manager({ transport, informers, syncTimeoutMs: 30_000 });
    const reconciled = new Set<string>();
    manager.addController({
      name: 'held-list',
      resource: ConfigMap,
      namespace,
      reconcile: ({ key }) => void reconciled.add(key),
    });
    // A request got no response before this one: the server was down.
    transport.connectivity.failed(new KubeApiError(0, 'Unreachable', 'connect ECONNREFUSED (injected)', 'GET', path));
    const started = manager.start();
    try {
      await waitFor(() => held.hits === 1, { timeoutMs: 15_000, what: 'the LIST the starting server holds' });
      assert.equal(manager.outage.state.holding, true, 'the gate probes /readyz');

      ready = true;
      await started;
      await waitFor(() => reconciled.has(`${namespace}/waiting`), {
        timeoutMs: 30_000,
        what: 'the waiting ConfigMap reconciled',
      });

      const lists = proxy.requests.filter((r) => !r.watch && r.path === path);
      assert.equal(lists.length, 2, 'the held LIST and the one sent again');
    } finally {
      ready = true;
      await manager.stop();
      transport.close();
    }
  });
});
