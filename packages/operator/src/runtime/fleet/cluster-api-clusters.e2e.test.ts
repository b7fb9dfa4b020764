import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type KubeObject, Transport } from '@nestor/core';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { ConfigMap, type V1ConfigMap } from '../../client/kinds.js';
import { CLUSTER_API_CLUSTER_CRD } from '../../test-support/cluster-api-crd.js';
import {
  configMapsPath,
  createConfigMap,
  patchConfigMap,
  serviceAccountKubeConfig,
} from '../../test-support/e2e-helpers.js';
import { Manager } from '../manager/manager.js';
import { ClusterApiClusters } from './cluster-api-clusters.js';
import type { Engagement } from './engagement.js';
import { Fleet } from './fleet.js';

// Cluster API's Clusters as members: the management cluster holds Cluster objects (their CRD
// cut down to what the provider reads) and their `<cluster>-kubeconfig` Secrets, as Cluster
// API makes them. Every member is the one API server of the test run, each reached as a
// ServiceAccount of its own: what differs between members is the credentials, which is all
// the provider handles; fleet.e2e.test.ts has members on API servers of their own.

const NS = 'capi-fleet'; // the Clusters and their Secrets: the operator's own namespace here
const WATCHED = 'capi-members'; // where the members' controller reconciles
const SELECTED = 'fleet.nestor.test/member';
const CLUSTERS = `/apis/cluster.x-k8s.io/v1beta1/namespaces/${NS}/clusters`;
let env: TestEnvironment;

before(async () => {
  env = await TestEnvironment.start({ crds: [CLUSTER_API_CLUSTER_CRD] });
  for (const name of [NS, WATCHED]) await env.client.request('POST', '/api/v1/namespaces', { metadata: { name } });
  await env.client.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
    metadata: { name: 'capi-member' },
    rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'patch'] }],
  });
  await createConfigMap(env.client, WATCHED, 'settings', { data: { v: '1' } });
});
after(async () => {
  await env?.client.raw('DELETE', `/api/v1/namespaces/${NS}`);
  await env?.client.raw('DELETE', `/api/v1/namespaces/${WATCHED}`);
  await env?.client.raw('DELETE', '/apis/rbac.authorization.k8s.io/v1/clusterroles/capi-member');
  await env?.stop();
});

/** A kubeconfig of a new ServiceAccount `account`, its token and CA inline, as Cluster API's Secret holds one. */
async function kubeconfigOf(account: string): Promise<string> {
  const { kubeConfig } = await serviceAccountKubeConfig(env, WATCHED, account, 'capi-member');
  return kubeConfig.exportConfig();
}

async function createCluster(name: string, selected: boolean): Promise<void> {
  await env.client.request('POST', CLUSTERS, {
    apiVersion: 'cluster.x-k8s.io/v1beta1',
    kind: 'Cluster',
    metadata: { name, labels: selected ? { [SELECTED]: 'yes' } : {} },
    spec: { controlPlaneEndpoint: { host: `${name}.example`, port: 6443 } },
  });
}

/** Sets the Cluster's ControlPlaneInitialized condition, as Cluster API's cluster controller does. */
async function initialized(name: string, status: 'True' | 'False'): Promise<void> {
  const conditions = [{ type: 'ControlPlaneInitialized', status, lastTransitionTime: new Date().toISOString() }];
  await env.client.request(
    'PATCH',
    `${CLUSTERS}/${name}/status`,
    { status: { conditions } },
    'application/merge-patch+json',
  );
}

async function putKubeconfig(cluster: string, kubeconfig: string, method: 'POST' | 'PUT' = 'POST'): Promise<void> {
  const name = `${cluster}-kubeconfig`;
  await env.client.request(method, `/api/v1/namespaces/${NS}/secrets${method === 'PUT' ? `/${name}` : ''}`, {
    metadata: { name, labels: { 'cluster.x-k8s.io/cluster-name': cluster } },
    type: 'cluster.x-k8s.io/secret',
    data: { value: Buffer.from(kubeconfig).toString('base64') },
  });
}

/** The value of `settings` the member's controller saw last (its annotation). */
async function seenBy(member: string): Promise<string | undefined> {
  const cm = await env.client.request<V1ConfigMap>('GET', configMapsPath(WATCHED, 'settings'));
  return cm.metadata?.annotations?.[annotation(member)];
}
const annotation = (member: string) => `seen.nestor.test/${member.replace('/', '.')}`;

describe('member clusters from Cluster API Clusters', () => {
  it('engages ready, selected Clusters on their kubeconfig Secrets, follows rotations, and drops them when not ready, unselected or deleted', async () => {
    await createCluster('east', true);
    await initialized('east', 'True');
    await putKubeconfig('east', await kubeconfigOf('east-1'));
    await createCluster('west', true); // not ready yet
    await putKubeconfig('west', await kubeconfigOf('west'));
    await createCluster('north', false); // ready, not selected
    await initialized('north', 'True');
    await putKubeconfig('north', await kubeconfigOf('north'));
    await createCluster('south', true); // ready, its Secret missing
    await initialized('south', 'True');

    const transport = await Transport.fromKubeConfig(env.kubeConfig);
    const manager = new Manager({ transport, shutdownGraceMs: 2_000 });
    const fleet = new Fleet(manager, {
      // No namespace: the operator's own, told to the fleet as OperatorModule does.
      providers: [new ClusterApiClusters({ labelSelector: `${SELECTED}=yes` })],
      operatorNamespace: NS,
      retry: { initialMs: 200, maxMs: 1_000 },
      syncTimeoutMs: 10_000,
    });
    const told: Engagement[] = [];
    fleet.engagements$.subscribe((change) => told.push(change));
    const toldOf = (member: string) => told.filter((e) => e.cluster === member).map((e) => e.type);
    manager.addController<V1ConfigMap & KubeObject>({
      name: 'settings',
      resource: ConfigMap,
      namespace: WATCHED,
      clusters: 'members',
      reconcile: async ({ object, client, cluster }) => {
        const v = object?.data?.['v'];
        if (!object || object.metadata?.annotations?.[annotation(cluster)] === v) return;
        await client.patch(
          ConfigMap,
          { namespace: WATCHED, name: 'settings' },
          {
            metadata: { annotations: { [annotation(cluster)]: v } },
          },
        );
      },
    });
    await manager.start();
    try {
      await waitFor(async () => (await seenBy(`${NS}/east`)) === '1', {
        timeoutMs: 60_000,
        what: 'the ready Cluster east engaged, named <namespace>/<name>, and its controller run',
      });
      assert.deepEqual(toldOf(`${NS}/west`), [], 'west is not ready: not named to the fleet');
      assert.deepEqual(toldOf(`${NS}/north`), [], 'north is not selected');

      // Ready without its Secret: refused, and reported on the Cluster, in readiness and status.
      const south = await waitFor(() => fleet.status().find((m) => m.name === `${NS}/south`), { what: 'south listed' });
      assert.equal(south.phase, 'failed');
      assert.match(south.error ?? '', /Secret capi-fleet\/south-kubeconfig does not exist/);
      assert.match(
        manager.health().checks.find((c) => c.name === `cluster:${NS}/south`)?.detail ?? '',
        /refused: .*south-kubeconfig does not exist/,
      );
      await waitFor(
        async () => {
          const events = await env.client.request<{ items: Array<{ reason?: string; regarding?: { kind?: string } }> }>(
            'GET',
            `/apis/events.k8s.io/v1/namespaces/${NS}/events?fieldSelector=regarding.name=south`,
          );
          return events.items.some((e) => e.reason === 'ClusterRefused' && e.regarding?.kind === 'Cluster');
        },
        { what: 'a ClusterRefused Event on the Cluster south' },
      );
      // A kubeconfig naming a token file is refused, naming the field; a good one engages it.
      const withTokenFile = [
        'clusters: [{ name: c, cluster: { server: "https://south.example:6443" } }]',
        'users: [{ name: u, user: { token-file: /var/run/secrets/kubernetes.io/serviceaccount/token } }]',
        'contexts: [{ name: x, context: { cluster: c, user: u } }]',
        'current-context: x',
      ].join('\n');
      await putKubeconfig('south', withTokenFile);
      await waitFor(
        () => /token-file \(a file\)/.test(fleet.status().find((m) => m.name === `${NS}/south`)?.error ?? ''),
        { what: "south refused for its kubeconfig's token-file" },
      );
      await putKubeconfig('south', await kubeconfigOf('south-2'), 'PUT');
      await waitFor(async () => (await seenBy(`${NS}/south`)) === '1', { what: 'south engaged on its fixed Secret' });

      // Ready later: engaged then.
      await initialized('west', 'True');
      await waitFor(async () => (await seenBy(`${NS}/west`)) === '1', { what: 'west engaged once ready' });

      // Rotated: east's Secret now holds another ServiceAccount's token, and the old one goes.
      const before = told.length;
      await putKubeconfig('east', await kubeconfigOf('east-2'), 'PUT');
      await waitFor(
        () =>
          told
            .slice(before)
            .filter((e) => e.cluster === `${NS}/east`)
            .map((e) => e.type)
            .join() === 'disengaged,connecting,engaged',
        { what: 'east engaged again on its rotated kubeconfig (told by engagements$)' },
      );
      const review = await fleet
        .get(`${NS}/east`)!
        .transport.json<{ status: { userInfo: { username: string } } }>(
          'POST',
          '/apis/authentication.k8s.io/v1/selfsubjectreviews',
          {
            body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
          },
        );
      assert.equal(review.status.userInfo.username, `system:serviceaccount:${WATCHED}:east-2`);
      await env.client.request('DELETE', `/api/v1/namespaces/${WATCHED}/serviceaccounts/east-1`);
      await patchConfigMap(env.client, WATCHED, 'settings', { data: { v: '2' } });
      await waitFor(async () => (await seenBy(`${NS}/east`)) === '2' && (await seenBy(`${NS}/west`)) === '2', {
        what: 'the change seen by east, on its rotated credentials, and by west',
      });

      // Not ready any more: disengaged, and nothing of it reconciled after.
      await initialized('west', 'False');
      await waitFor(
        () => fleet.get(`${NS}/west`) === undefined && !fleet.status().some((m) => m.name === `${NS}/west`),
        {
          what: 'west disengaged once not ready',
        },
      );
      await patchConfigMap(env.client, WATCHED, 'settings', { data: { v: '3' } });
      await waitFor(async () => (await seenBy(`${NS}/east`)) === '3', { what: 'the next change seen by east' });
      assert.equal(await seenBy(`${NS}/west`), '2', 'no reconcile in the disengaged west');

      // No longer selected, and deleted: disengaged.
      await env.client.request(
        'PATCH',
        `${CLUSTERS}/east`,
        { metadata: { labels: { [SELECTED]: null } } },
        'application/merge-patch+json',
      );
      await env.client.request('DELETE', `${CLUSTERS}/south`);
      await waitFor(() => fleet.names.length === 1, { what: 'east (unselected) and south (deleted) disengaged' });
      assert.deepEqual(fleet.status(), []);
      assert.deepEqual(toldOf(`${NS}/north`), [], 'north was never selected');
    } finally {
      await manager.stop();
      transport.close();
    }
  });
});
