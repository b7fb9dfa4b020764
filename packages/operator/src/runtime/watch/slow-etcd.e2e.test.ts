import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1ConfigMap } from '../../client/kinds.js';
import { KubeApiError, Transport, type KubeObject, type RuntimeLogger } from '@nestor/core';
import { parallel, TestEnvironment, waitFor } from '@nestor/testing';
import { ConfigMap } from '../../client/kinds.js';
import { configMapsPath, createConfigMap, patchConfigMap } from '../../test-support/e2e-helpers.js';
import { Manager } from '../manager/manager.js';

// etcd slow: kube-apiserver reaches etcd through a relay that delivers every byte late.
// Requests then take seconds, or end with the API server's own 504 when their etcd round
// trip outlasts its request timeout (6 s here, 60 s by default). /readyz fails its etcd
// checks meanwhile (their deadline is 2 s): the outage gate, which probes it, used to hold
// dispatch for as long as etcd was slow, on a server that answers.

const SERVER_TIMEOUT_S = 6;

let env: TestEnvironment;
before(async () => {
  env = await TestEnvironment.start({
    useExistingCluster: false,
    etcdRelay: true,
    apiServerFlags: [`--request-timeout=${SERVER_TIMEOUT_S}s`],
  });
});
after(async () => {
  env?.etcdRelay.slow(0);
  await env?.stop();
});

/**
 * The API server's timeout ended the request: a 504, or over HTTP/2 (the default) its stream
 * reset with INTERNAL_ERROR, which this server does too (seen in CI: one write of ten).
 */
function endedByServer(error: unknown): boolean {
  return error instanceof KubeApiError && (error.status === 504 || error.code === 'ERR_HTTP2_STREAM_ERROR');
}

function recordingLogger(lines: string[]): RuntimeLogger {
  const record = (message: string) => void lines.push(message);
  return { debug: record, info: record, warn: record, error: record };
}

describe('a slow etcd', () => {
  it('answers slowly or with the server’s 504; nothing piles up, the gate does not hold, all converge', async () => {
    const namespace = await env.createNamespace('slow-etcd');
    const names = Array.from({ length: 10 }, (_, i) => `cm-${i}`);
    await parallel(names, 8, (name) => createConfigMap(env.client, namespace, name, { data: { v: '1' } }));

    const workers = 4;
    const transport = await Transport.fromKubeConfig(env.kubeConfig);
    const lines: string[] = [];
    const manager = new Manager({ transport, logger: recordingLogger(lines) });
    const failures: number[] = [];
    manager.addController<V1ConfigMap & KubeObject>({
      name: 'slow-etcd',
      resource: ConfigMap,
      namespace,
      maxConcurrentReconciles: workers,
      reconcile: async ({ object, signal }) => {
        try {
          await transport.json('PATCH', configMapsPath(namespace, object!.metadata!.name!), {
            body: { metadata: { annotations: { 'nestor.test/observed': object!.data?.['v'] ?? '' } } },
            contentType: 'application/merge-patch+json',
            signal,
          });
        } catch (error) {
          failures.push(endedByServer(error) ? 504 : error instanceof KubeApiError ? error.status : -1);
          throw error;
        }
      },
    });
    const downs: string[] = [];
    transport.connectivity.onChange((up, error) => {
      if (!up) downs.push(error?.message ?? 'down');
    });
    let maxInFlight = 0;
    const sampler = setInterval(() => (maxInFlight = Math.max(maxInFlight, transport.stats.inFlight)), 10);
    const converged = (v: string, timeoutMs: number, what: string) =>
      waitFor(
        async () => {
          const list = await env.client.request<{ items: V1ConfigMap[] }>('GET', configMapsPath(namespace));
          return list.items.every((cm) => cm.metadata?.annotations?.['nestor.test/observed'] === v);
        },
        { timeoutMs, intervalMs: 250, what },
      );
    await manager.start();
    try {
      await converged('1', 30_000, 'the first reconciles');

      // 0.5 s each way: every etcd round trip takes a second; work goes on, slowly.
      env.etcdRelay.slow(500);
      await parallel(names, 10, (name) => patchConfigMap(env.client, namespace, name, { data: { v: '2' } }));
      await converged('2', 60_000, 'the changes made while etcd is slow');

      // 4 s each way: a write's round trip (8 s) outlasts the API server's timeout (6 s). Its
      // 504 comes after the write was sent to etcd, which applies it late.
      env.etcdRelay.slow(4_000);
      await parallel(names, 10, (name) =>
        patchConfigMap(env.client, namespace, name, { data: { v: '3' } }).catch((error: unknown) => {
          if (!endedByServer(error)) throw error;
        }),
      );
      await waitFor(() => failures.filter((status) => status === 504).length >= workers, {
        timeoutMs: 60_000,
        what: 'the operator’s writes to end with the API server’s 504',
      });
      assert.deepEqual(
        [...new Set(failures)],
        [504],
        'the API server ended them: no request ran into the client’s deadline',
      );
      assert.deepEqual(downs, [], 'a slow answer is an answer: the API server was never taken for unreachable');
      assert.ok(!lines.some((l) => l.includes('holding reconciles')), 'the outage gate never held');
      assert.ok(maxInFlight <= workers, `at most one request per worker in flight (${maxInFlight})`);

      // The gate, if something does take the server for unreachable meanwhile, sees it answer
      // (its /readyz, etcd checks aside) and lets dispatch go on.
      transport.connectivity.failed(new KubeApiError(0, 'Timeout', 'no answer (injected)', 'GET', '/injected'));
      await waitFor(() => lines.some((l) => l.includes('answers again')), {
        timeoutMs: 20_000,
        what: 'the outage gate to release while etcd is still slow',
      });

      env.etcdRelay.slow(0);
      await converged('3', 90_000, 'every change once etcd is fast again');
    } finally {
      clearInterval(sampler);
      env.etcdRelay.slow(0);
      await manager.stop();
      transport.close();
    }
  });
});
