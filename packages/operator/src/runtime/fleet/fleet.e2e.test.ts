import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { after, before, describe, it } from 'node:test';
import type { V1ConfigMap } from '../../client/kinds.js';
import { Transport, type KubeObject } from '@nestor/core';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { ConfigMap } from '../../client/kinds.js';
import {
  configMapsPath,
  createConfigMap,
  patchConfigMap,
  serviceAccountKubeConfig,
} from '../../test-support/e2e-helpers.js';
import { Manager } from '../manager/manager.js';
import { OperatorMetrics } from '../../metrics/operator-metrics.js';
import type { Engagement } from './engagement.js';
import { Fleet } from './fleet.js';
import { KUBECONFIG_SECRET_LABEL, KubeconfigSecrets } from './kubeconfig-secrets.js';

// One operator over a fleet: a management cluster holds a kubeconfig Secret per member
// cluster (multicluster-runtime's label and key); a controller with `clusters: 'members'`
// reconciles ConfigMaps in each member, the request naming the member. Members are real
// control planes, started beside the management one (each ~6 s and ~350 MB of RSS here).

const FLEET_NS = 'fleet-system';
const WATCHED = 'apps';
let management: TestEnvironment;
const members: Record<string, TestEnvironment> = {};

before(async () => {
  const [first, ...rest] = await Promise.all(
    [0, 1, 2, 3, 4].map(() => TestEnvironment.start({ useExistingCluster: false })),
  );
  management = first!;
  ['a', 'b', 'c', 'd'].forEach((name, i) => (members[name] = rest[i]!));
  await management.client.request('POST', '/api/v1/namespaces', { metadata: { name: FLEET_NS } });
  for (const env of Object.values(members)) {
    await env.client.request('POST', '/api/v1/namespaces', { metadata: { name: WATCHED } });
  }
});
after(async () => {
  await Promise.all([management, ...Object.values(members)].map((env) => env?.stop()));
});

/** The garbage collector, as --expose-gc would give it, without the flag on the test runner. */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** A kubeconfig for `env` with a ServiceAccount token inline, as a kubeconfig Secret holds it. */
async function memberKubeconfig(env: TestEnvironment, account: string): Promise<string> {
  const { kubeConfig } = await serviceAccountKubeConfig(env, WATCHED, account);
  return kubeConfig.exportConfig();
}

async function putSecret(name: string, kubeconfig: string, method: 'POST' | 'PUT' = 'POST'): Promise<void> {
  const path = `/api/v1/namespaces/${FLEET_NS}/secrets${method === 'PUT' ? `/${name}` : ''}`;
  await management.client.request(method, path, {
    metadata: { name, labels: { [KUBECONFIG_SECRET_LABEL]: 'true' } },
    data: { kubeconfig: Buffer.from(kubeconfig).toString('base64') },
  });
}

/** The cluster that reconciled ConfigMap `name` in `member` last, from its annotation. */
async function reconciledBy(member: string, name: string): Promise<string | undefined> {
  const cm = await members[member]!.client.request<V1ConfigMap>('GET', configMapsPath(WATCHED, name));
  return cm.metadata?.annotations?.['nestor.test/reconciled-in'] ?? undefined;
}

async function observed(member: string, name: string): Promise<string | undefined> {
  const cm = await members[member]!.client.request<V1ConfigMap>('GET', configMapsPath(WATCHED, name));
  return cm.metadata?.annotations?.['nestor.test/observed'];
}

describe('a fleet of member clusters from kubeconfig Secrets', () => {
  it('reconciles in each member, engages one added while running, drops one removed, and goes on while one is down', async () => {
    for (const member of ['a', 'b', 'c', 'd']) {
      await createConfigMap(members[member]!.client, WATCHED, 'settings', { data: { v: '1' } });
    }
    for (const member of ['a', 'b', 'c']) await putSecret(member, await memberKubeconfig(members[member]!, 'operator'));

    const transport = await Transport.fromKubeConfig(management.kubeConfig);
    // With metrics, as an operator runs: they read every controller's queue when scraped.
    const manager = new Manager({ transport, shutdownGraceMs: 2_000, metrics: new OperatorMetrics() });
    const fleet = new Fleet(manager, {
      providers: [new KubeconfigSecrets({ namespace: FLEET_NS })],
      retry: { initialMs: 200, maxMs: 1_000 },
      syncTimeoutMs: 10_000,
    });
    const told: Engagement[] = [];
    fleet.engagements$.subscribe((change) => told.push(change));
    const toldOf = (member: string) => told.filter((e) => e.cluster === member).map((e) => e.type);
    const runs: Array<{ cluster: string; key: string }> = [];
    manager.addController<V1ConfigMap & KubeObject>({
      name: 'settings',
      resource: ConfigMap,
      namespace: WATCHED,
      clusters: 'members',
      reconcile: async ({ object, client, cluster, key }) => {
        runs.push({ cluster, key });
        const v = object?.data?.['v'] ?? '';
        if (object?.metadata?.annotations?.['nestor.test/observed'] === v) return;
        await client.patch(
          ConfigMap,
          { namespace: WATCHED, name: object!.metadata!.name! },
          {
            metadata: { annotations: { 'nestor.test/reconciled-in': cluster, 'nestor.test/observed': v } },
          },
        );
      },
    });
    await manager.start();
    try {
      // Each member's object, reconciled by that member's client, the request naming it.
      await waitFor(
        async () => {
          for (const member of ['a', 'b', 'c']) if ((await reconciledBy(member, 'settings')) !== member) return false;
          return true;
        },
        { timeoutMs: 60_000, what: 'the ConfigMaps of members a, b and c reconciled in their clusters' },
      );
      assert.deepEqual(fleet.names.sort(), ['a', 'b', 'c', 'default']);
      assert.equal(await reconciledBy('d', 'settings'), undefined, 'd is not a member yet');

      // A fourth member added while running is engaged and reconciled.
      await putSecret('d', await memberKubeconfig(members['d']!, 'operator'));
      await waitFor(async () => (await reconciledBy('d', 'settings')) === 'd', {
        timeoutMs: 60_000,
        what: 'member d, added while running, reconciled',
      });

      // One removed: disengaged, its cache freed, nothing of it reconciled after.
      // Held weakly: the cluster, and its informers with the objects they cache.
      const informers = fleet.get('b')!.informers.all();
      assert.ok(informers.length > 0, "b's informers run while it is engaged");
      const removed = [new WeakRef(fleet.get('b')!), ...informers.map((informer) => new WeakRef(informer))];
      informers.length = 0;
      await management.client.request('DELETE', `/api/v1/namespaces/${FLEET_NS}/secrets/b`);
      await waitFor(() => fleet.get('b') === undefined && !fleet.status().some((m) => m.name === 'b'), {
        what: 'member b disengaged',
      });
      // Nothing keeps b's cluster (its informers and cache) once it is disengaged.
      const gc = collector();
      await waitFor(
        () => {
          gc();
          return removed.every((ref) => ref.deref() === undefined);
        },
        { intervalMs: 200, what: "b's cluster, informers and cache garbage-collected" },
      );
      const bRunsBefore = runs.filter((r) => r.cluster === 'b').length;
      await patchConfigMap(members['b']!.client, WATCHED, 'settings', { data: { v: '2' } });
      await patchConfigMap(members['a']!.client, WATCHED, 'settings', { data: { v: '2' } });
      await waitFor(async () => (await observed('a', 'settings')) === '2', { what: "a's change reconciled" });
      assert.equal(runs.filter((r) => r.cluster === 'b').length, bRunsBefore, 'no reconcile of the disengaged member');
      assert.equal(await observed('b', 'settings'), '1');
      assert.deepEqual(toldOf('b'), ['connecting', 'engaged', 'disengaged'], 'engagements$ told b come and go');

      // One member's API server down: the others converge, readiness names it and does not fail on it.
      const down = members['c']!.restartApiServer({ downtimeMs: 15_000 });
      await waitFor(
        () => {
          const check = manager.health().checks.find((c) => c.name === 'cluster:c');
          return check !== undefined && !check.ok;
        },
        { timeoutMs: 30_000, what: 'readiness to name member c as down' },
      );
      assert.equal(manager.health().ready, true, 'a member down does not make the operator unready');
      await waitFor(() => fleet.status().find((m) => m.name === 'c')?.held === true, {
        what: "c's reconciles held (nestor_fleet_member_held) while its API server is down",
      });
      await patchConfigMap(members['a']!.client, WATCHED, 'settings', { data: { v: '3' } });
      await waitFor(async () => (await observed('a', 'settings')) === '3', {
        what: "a's change reconciled while c is down",
      });
      await down;
      await patchConfigMap(members['c']!.client, WATCHED, 'settings', { data: { v: '3' } });
      await waitFor(async () => (await observed('c', 'settings')) === '3', {
        timeoutMs: 60_000,
        what: "c's change reconciled once its API server is back",
      });
      assert.ok(manager.health().checks.find((c) => c.name === 'cluster:c')?.ok, 'c reported healthy again');
      const outage = toldOf('c').filter((type) => type === 'held' || type === 'answering');
      assert.equal(outage[0], 'held', "engagements$ told c's API server stopped answering");
      assert.equal(outage.at(-1), 'answering', 'and that it answers again');
    } finally {
      await manager.stop();
      transport.close();
    }
  });

  it('engages a member that lacks the kind once it is installed, and follows a rotated kubeconfig', async () => {
    const ns = 'fleet-kinds';
    await management.client.request('POST', '/api/v1/namespaces', { metadata: { name: ns } });
    await members['a']!.installCRDs([GADGET_CRD]);
    await createGadget('a', 'g', 1);
    const secret = async (name: string, account: string, method: 'POST' | 'PUT' = 'POST') => {
      const path = `/api/v1/namespaces/${ns}/secrets${method === 'PUT' ? `/${name}` : ''}`;
      const kubeconfig = await memberKubeconfig(members[name]!, account);
      await management.client.request(method, path, {
        metadata: { name, labels: { [KUBECONFIG_SECRET_LABEL]: 'true' } },
        data: { kubeconfig: Buffer.from(kubeconfig).toString('base64') },
      });
    };
    await secret('a', 'gadgets');
    await secret('c', 'gadgets');

    const transport = await Transport.fromKubeConfig(management.kubeConfig);
    const manager = new Manager({ transport, shutdownGraceMs: 2_000 });
    const fleet = new Fleet(manager, {
      providers: [new KubeconfigSecrets({ namespace: ns })],
      retry: { initialMs: 200, maxMs: 1_000 },
      syncTimeoutMs: 10_000,
    });
    manager.addController<Gadget>({
      name: 'gadgets',
      resource: GADGETS,
      clusters: 'members',
      reconcile: async ({ object, client, cluster }) => {
        if (!object || object.status?.observedSize === object.spec.size) return;
        await client.patchStatus(object, { observedSize: object.spec.size, cluster });
      },
    });
    await manager.start();
    try {
      await waitFor(async () => (await gadget('a', 'g')).status?.observedSize === 1, { what: "a's Gadget reconciled" });
      // c lacks the kind: named, retried, advisory; the operator stays ready.
      const check = await waitFor(
        () =>
          manager.health().checks.find((c) => c.name === 'cluster:c' && /Gadget .*CRD installed/.test(c.detail ?? '')),
        { what: 'readiness to say c lacks the Gadget kind' },
      );
      assert.equal(check.ok, false);
      assert.equal(manager.health().ready, true);
      assert.equal(fleet.status().find((m) => m.name === 'c')?.phase, 'failed');

      await members['c']!.installCRDs([GADGET_CRD]);
      await createGadget('c', 'g', 2);
      await waitFor(async () => (await gadget('c', 'g')).status?.cluster === 'c', {
        timeoutMs: 60_000,
        what: 'c engaged once the kind is installed, and its Gadget reconciled',
      });

      // Rotated: a's Secret now holds another ServiceAccount's token, and the old one is deleted.
      const rotatedAt = Date.now();
      await secret('a', 'gadgets-rotated', 'PUT');
      await waitFor(
        () => {
          const a = fleet.status().find((m) => m.name === 'a');
          return a?.phase === 'engaged' && a.since >= rotatedAt;
        },
        { what: 'a engaged again on its new kubeconfig' },
      );
      await members['a']!.client.request('DELETE', `/api/v1/namespaces/${WATCHED}/serviceaccounts/gadgets`);
      await members['a']!.client.request('PATCH', `/apis/bench.nestor.dev/v1/namespaces/${WATCHED}/gadgets/g`, {
        spec: { size: 5 },
      });
      await waitFor(async () => (await gadget('a', 'g')).status?.observedSize === 5, {
        what: "a's change reconciled with the rotated credentials",
      });
    } finally {
      await manager.stop();
      transport.close();
    }
  });

  it("maps a kind watched in member clusters to an object of the management cluster, read with each member's client", async () => {
    const ns = 'fleet-aware';
    await management.client.request('POST', '/api/v1/namespaces', { metadata: { name: ns } });
    for (const member of ['a', 'c']) {
      const kubeconfig = await memberKubeconfig(members[member]!, 'inventory');
      await management.client.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
        metadata: { name: member, labels: { [KUBECONFIG_SECRET_LABEL]: 'true' } },
        data: { kubeconfig: Buffer.from(kubeconfig).toString('base64') },
      });
    }
    await createConfigMap(management.client, ns, 'inventory', { data: {} });

    const transport = await Transport.fromKubeConfig(management.kubeConfig);
    const manager = new Manager({ transport, shutdownGraceMs: 2_000 });
    const fleet = new Fleet(manager, {
      providers: [new KubeconfigSecrets({ namespace: ns })],
      retry: { initialMs: 200, maxMs: 1_000 },
    });
    const mappedFrom = new Set<string>();
    manager.addController<V1ConfigMap & KubeObject>({
      name: 'inventory',
      resource: ConfigMap,
      namespace: ns,
      watches: [
        {
          resource: ConfigMap,
          namespace: WATCHED,
          clusters: 'members',
          map: (_object, event) => {
            mappedFrom.add(event.cluster!);
            return { namespace: ns, name: 'inventory' };
          },
        },
      ],
      reconcile: async ({ object, client }) => {
        if (object?.metadata?.name !== 'inventory') return;
        // Cluster-aware: each engaged member's client, reading that member's API server.
        const counts: Record<string, string> = {};
        for (const name of fleet.names.filter((n) => n !== 'default').sort()) {
          const list = await fleet.get(name)!.client.list(ConfigMap, { namespace: WATCHED });
          counts[name] = String(list.filter((cm) => cm.metadata?.name?.startsWith('item-')).length);
        }
        await client.patch(ConfigMap, { namespace: ns, name: 'inventory' }, { data: counts });
      },
    });
    await manager.start();
    try {
      await createConfigMap(members['c']!.client, WATCHED, 'item-1', { data: {} });
      await waitFor(
        async () => {
          const cm = await management.client.request<V1ConfigMap>('GET', configMapsPath(ns, 'inventory'));
          return cm.data?.['a'] === '0' && cm.data?.['c'] === '1';
        },
        { timeoutMs: 60_000, what: "the inventory to count c's item" },
      );
      await createConfigMap(members['a']!.client, WATCHED, 'item-2', { data: {} });
      await waitFor(
        async () => {
          const cm = await management.client.request<V1ConfigMap>('GET', configMapsPath(ns, 'inventory'));
          return cm.data?.['a'] === '1';
        },
        { what: "a member's new ConfigMap to queue the management cluster's inventory" },
      );
      assert.deepEqual([...mappedFrom].sort(), ['a', 'c'], 'the mapper saw each member named');
    } finally {
      await manager.stop();
      transport.close();
    }
  });
});

interface Gadget extends KubeObject {
  spec: { size: number };
  status?: { observedSize?: number; cluster?: string };
}

const GADGETS = {
  group: 'bench.nestor.dev',
  version: 'v1',
  kind: 'Gadget',
  plural: 'gadgets',
  namespaced: true,
} as const;

const GADGET_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gadgets.bench.nestor.dev' },
  spec: {
    group: 'bench.nestor.dev',
    scope: 'Namespaced',
    names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: { type: 'object', properties: { size: { type: 'integer' } } },
              status: {
                type: 'object',
                properties: { observedSize: { type: 'integer' }, cluster: { type: 'string' } },
              },
            },
          },
        },
      },
    ],
  },
};

async function createGadget(member: string, name: string, size: number): Promise<void> {
  await members[member]!.client.request('POST', `/apis/bench.nestor.dev/v1/namespaces/${WATCHED}/gadgets`, {
    apiVersion: 'bench.nestor.dev/v1',
    kind: 'Gadget',
    metadata: { name },
    spec: { size },
  });
}

async function gadget(member: string, name: string): Promise<Gadget> {
  return members[member]!.client.request<Gadget>(
    'GET',
    `/apis/bench.nestor.dev/v1/namespaces/${WATCHED}/gadgets/${name}`,
  );
}
