// A node's loss, as the operator's status tells it. On a control plane of its own (a node is
// taken down) with two fake nodes, the second cordoned, a Memcached's pods all run on the
// first; when it goes NotReady the node lifecycle controller taints it and its pods are
// evicted, the replacements have nowhere to go, and the Memcached is not Available; once the
// second node is uncordoned the scheduler places them there and it is Available again. The
// operator only watches its Deployment: the controllers, the scheduler and kwok's kubelets do
// the rest, as on a cluster. (With every node of a zone NotReady, the node lifecycle
// controller evicts nothing, suspecting its own network: hence two nodes.)
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { OperatorModule, customResourceDefinition } from '@nestor/operator';
import { TestEnvironment, waitFor } from '@nestor/testing';
import type { PodObject } from '../kube-types.js';
import { MemcachedModule } from './memcached.module.js';
import { Memcached } from './memcached.resource.js';
import { conditionOf } from './memcached.status.js';

let env: TestEnvironment;
let ns: string;
let app: INestApplicationContext | undefined;

before(async () => {
  env = await TestEnvironment.start({
    useExistingCluster: false,
    nodes: 2,
    crds: [customResourceDefinition(Memcached)],
  });
  ns = await env.createNamespace('memcached-node-loss');
  const moduleRef = await Test.createTestingModule({
    imports: [
      OperatorModule.forRoot({
        kubeConfig: env.kubeConfig,
        namespace: ns,
        metrics: { port: 0 },
        health: { port: 0 },
        webhooks: { port: 0 },
      }),
      MemcachedModule,
    ],
  }).compile();
  app = await moduleRef.init();
});
after(async () => {
  await app?.close();
  await env?.stop();
});

const memcached = (name: string) => `/apis/cache.example.com/v1alpha1/namespaces/${ns}/memcacheds/${name}`;

/** The Memcached once its status says Available is `status`, with `ready` ready replicas. */
function available(name: string, status: 'True' | 'False', ready: number, what: string) {
  return waitFor(
    async () => {
      const m = await env.client.request<Memcached>('GET', memcached(name));
      const condition = conditionOf(m, 'Available');
      return (
        condition?.status === status &&
        condition.observedGeneration === m.metadata.generation &&
        (m.status?.readyReplicas ?? 0) === ready &&
        m
      );
    },
    { timeoutMs: 60_000, intervalMs: 100, what },
  );
}

const readyPods = async () =>
  (await env.client.request<{ items: PodObject[] }>('GET', `/api/v1/namespaces/${ns}/pods`)).items.filter(
    (pod) =>
      !pod.metadata?.deletionTimestamp &&
      pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
  );

describe('Memcached on a node that is lost', () => {
  it('reports Available=False when its node goes NotReady, and True once its pods are rescheduled on another', async () => {
    const [first, second] = await env.nodes.names();
    await env.nodes.cordon(second!);
    await env.client.request('POST', `/apis/cache.example.com/v1alpha1/namespaces/${ns}/memcacheds`, {
      apiVersion: 'cache.example.com/v1alpha1',
      kind: 'Memcached',
      metadata: { name: 'cache' },
      spec: { size: 2 },
    });
    await available('cache', 'True', 2, 'cache to be Available with 2 ready replicas');
    assert.deepEqual(
      (await readyPods()).map((pod) => pod.spec?.nodeName),
      [first, first],
      'both pods run on the first node',
    );

    const recover = await env.nodes.notReady(first!);
    try {
      const down = await available('cache', 'False', 0, 'cache to be reported not Available after its node is lost');
      assert.equal(conditionOf(down, 'Available')?.reason, 'NoReplicasAvailable');

      await env.nodes.uncordon(second!);
      await available('cache', 'True', 2, 'cache to be Available again on the other node');
      assert.deepEqual(
        (await readyPods()).map((pod) => pod.spec?.nodeName),
        [second, second],
        'the replacement pods run on the other node',
      );
    } finally {
      await recover();
    }
  });
});
