import assert from 'node:assert/strict';
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
    [0, 1, 2, 3].map(() => TestEnvironment.start({ useExistingCluster: false })),
  );
  management = first!;
  ['a', 'b', 'c'].forEach((name, i) => (members[name] = rest[i]!));
  await management.client.request('POST', '/api/v1/namespaces', { metadata: { name: FLEET_NS } });
  for (const env of Object.values(members)) {
    await env.client.request('POST', '/api/v1/namespaces', { metadata: { name: WATCHED } });
  }
});
after(async () => {
  await Promise.all([management, ...Object.values(members)].map((env) => env?.stop()));
});

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
    for (const member of ['a', 'b', 'c']) {
      await createConfigMap(members[member]!.client, WATCHED, 'settings', { data: { v: '1' } });
    }
    await putSecret('a', await memberKubeconfig(members['a']!, 'operator'));
    await putSecret('b', await memberKubeconfig(members['b']!, 'operator'));

    const transport = await Transport.fromKubeConfig(management.kubeConfig);
    const manager = new Manager({ transport, shutdownGraceMs: 2_000 });
    const fleet = new Fleet(manager, {
      providers: [new KubeconfigSecrets({ namespace: FLEET_NS })],
      retry: { initialMs: 200, maxMs: 1_000 },
      syncTimeoutMs: 10_000,
    });
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
        async () => (await reconciledBy('a', 'settings')) === 'a' && (await reconciledBy('b', 'settings')) === 'b',
        {
          timeoutMs: 60_000,
          what: 'the ConfigMaps of members a and b reconciled in their clusters',
        },
      );
      assert.deepEqual(fleet.names.sort(), ['a', 'b', 'default']);
      assert.equal(await reconciledBy('c', 'settings'), undefined, 'c is not a member yet');

      // A member added while running is engaged and reconciled.
      await putSecret('c', await memberKubeconfig(members['c']!, 'operator'));
      await waitFor(async () => (await reconciledBy('c', 'settings')) === 'c', {
        timeoutMs: 60_000,
        what: 'member c, added while running, reconciled',
      });

      // One removed: disengaged, its cache freed, nothing of it reconciled after.
      await management.client.request('DELETE', `/api/v1/namespaces/${FLEET_NS}/secrets/b`);
      await waitFor(() => fleet.get('b') === undefined && !fleet.status().some((m) => m.name === 'b'), {
        what: 'member b disengaged',
      });
      const bRunsBefore = runs.filter((r) => r.cluster === 'b').length;
      await patchConfigMap(members['b']!.client, WATCHED, 'settings', { data: { v: '2' } });
      await patchConfigMap(members['a']!.client, WATCHED, 'settings', { data: { v: '2' } });
      await waitFor(async () => (await observed('a', 'settings')) === '2', { what: "a's change reconciled" });
      assert.equal(runs.filter((r) => r.cluster === 'b').length, bRunsBefore, 'no reconcile of the disengaged member');
      assert.equal(await observed('b', 'settings'), '1');

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
    } finally {
      await manager.stop();
      transport.close();
    }
  });
});
