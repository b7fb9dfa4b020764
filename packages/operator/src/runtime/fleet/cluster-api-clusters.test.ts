import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeApiError, type KubeObject, silentLogger } from '@nestor/core';
import type { Informer } from '../cache/informer.js';
import { type ClusterApiCluster, controlPlaneInitialized } from './cluster-api-cluster.js';
import { ClusterApiClusters } from './cluster-api-clusters.js';
import { ClusterApiMembers } from './cluster-api-members.js';
import type { ClusterSink } from './cluster-provider.js';

const cluster = (name: string, status?: ClusterApiCluster['status']): ClusterApiCluster => ({
  apiVersion: 'cluster.x-k8s.io/v1beta1',
  kind: 'Cluster',
  metadata: { name, namespace: 'fleet', uid: `uid-${name}` },
  ...(status ? { status } : {}),
});
const initialized = (status = 'True') => ({ conditions: [{ type: 'ControlPlaneInitialized', status }] });

describe('controlPlaneInitialized', () => {
  it("reads the ControlPlaneInitialized condition first, then the versions' booleans", () => {
    assert.equal(controlPlaneInitialized(cluster('a')), false, 'no status');
    assert.equal(controlPlaneInitialized(cluster('a', initialized())), true);
    assert.equal(controlPlaneInitialized(cluster('a', { ...initialized('False'), controlPlaneReady: true })), false);
    assert.equal(
      controlPlaneInitialized(cluster('a', { v1beta2: initialized() })),
      true,
      'v1beta2 conditions in v1beta1',
    );
    assert.equal(controlPlaneInitialized(cluster('a', { initialization: { controlPlaneInitialized: true } })), true);
    assert.equal(controlPlaneInitialized(cluster('a', { controlPlaneReady: true })), true);
    assert.equal(controlPlaneInitialized(cluster('a', { phase: 'Provisioned', infrastructureReady: true })), false);
    assert.equal(controlPlaneInitialized(cluster('a', { conditions: 'True' as never })), false, 'not a list: ignored');
  });
});

describe('ClusterApiClusters', () => {
  it("asks for its rights in the operator's namespace, the one given, or cluster-wide", () => {
    const where = (provider: ClusterApiClusters) => provider.permissions({ operatorNamespace: 'ops' })[0]!.namespace;
    assert.equal(where(new ClusterApiClusters()), 'ops');
    assert.equal(where(new ClusterApiClusters({ namespace: 'capi' })), 'capi');
    assert.equal(where(new ClusterApiClusters({ allNamespaces: true })), undefined);
    assert.deepEqual(new ClusterApiClusters().permissions({ operatorNamespace: 'ops' })[0]!.rules[0], {
      apiGroups: ['cluster.x-k8s.io'],
      resources: ['clusters'],
      verbs: ['get', 'list', 'watch'],
    });
  });

  it('refuses options that cannot work, saying why', () => {
    assert.throws(() => new ClusterApiClusters({ version: 'beta1' }), /"beta1" is not an API version/);
    assert.throws(() => new ClusterApiClusters({ namespace: 'a', allNamespaces: true }), /not both/);
  });
});

/** The provider's bookkeeping over fake informers and a fake API server holding `secrets`. */
function members(options: { memberName?: (c: { namespace: string; name: string }) => string } = {}) {
  const clusters = new Map<string, ClusterApiCluster>();
  const listed = new Map<string, KubeObject>();
  const secrets = new Map<string, { data: Record<string, string>; version: string } | 'forbidden'>();
  const calls: string[] = [];
  const fleet: ClusterSink = {
    engage: (name, target) =>
      void calls.push(`engage ${name} ${target.revision} on ${target.source?.kind}/${target.source?.name}`),
    disengage: (name) => void calls.push(`disengage ${name}`),
    refuse: (name, error) => void calls.push(`refuse ${name}: ${error.message}`),
  };
  const abort = new AbortController();
  const tracker = new ClusterApiMembers({
    fleet,
    transport: {
      json: async <T>(_method: string, path: string) => {
        const secret = secrets.get(path.split('/').pop()!);
        if (secret === 'forbidden')
          throw KubeApiError.fromResponse({ method: 'GET', path }, 403, 'secrets is forbidden');
        if (!secret) throw KubeApiError.fromResponse({ method: 'GET', path }, 404, 'not found');
        return { metadata: { resourceVersion: secret.version }, data: secret.data } as T;
      },
    },
    clusters: { get: (key: string) => clusters.get(key) } as unknown as Informer<ClusterApiCluster>,
    secrets: { get: (key: string) => listed.get(key) } as unknown as Informer<KubeObject>,
    apiVersion: 'cluster.x-k8s.io/v1beta1',
    isReady: controlPlaneInitialized,
    memberName: options.memberName ?? (({ namespace, name }) => `${namespace}/${name}`),
    allowExec: false,
    log: silentLogger,
    signal: abort.signal,
  });
  const putSecret = (cluster: string, server: string, version: string) => {
    const name = `${cluster}-kubeconfig`;
    const kubeconfig = `clusters: [{ name: c, cluster: { server: "${server}" } }]\nusers: [{ name: u, user: { token: t } }]\ncontexts: [{ name: x, context: { cluster: c, user: u } }]\ncurrent-context: x`;
    secrets.set(name, { data: { value: Buffer.from(kubeconfig).toString('base64') }, version });
    listed.set(`fleet/${name}`, { metadata: { name, namespace: 'fleet', resourceVersion: version } } as KubeObject);
  };
  return { tracker, clusters, listed, secrets, calls, putSecret, abort };
}

/** Lets the looks under way finish (each awaits one read of a Secret). */
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('ClusterApiMembers', () => {
  it('engages a ready Cluster on its Secret once, again when the Secret changes, and drops it when not ready', async () => {
    const { tracker, clusters, calls, putSecret, abort } = members();
    clusters.set('fleet/east', cluster('east', initialized()));
    putSecret('east', 'https://east-1', '1');
    tracker.changed('fleet/east');
    tracker.changed('fleet/east'); // during the look: looked at once more, nothing new
    await settled();
    assert.equal(calls.length, 1);
    assert.match(calls[0]!, /^engage fleet\/east \w+ on Cluster\/east$/);

    putSecret('east', 'https://east-2', '2');
    tracker.secretChanged('fleet', 'east-kubeconfig');
    tracker.secretChanged('fleet', 'east-ca'); // not a kubeconfig: no look
    await settled();
    assert.equal(calls.length, 2);
    assert.notEqual(calls[1], calls[0], 'engaged again with another revision');

    clusters.set('fleet/east', cluster('east', initialized('False')));
    tracker.changed('fleet/east');
    await settled();
    assert.deepEqual(calls.slice(2), ['disengage fleet/east']);
    abort.abort();
  });

  it('refuses a ready Cluster without its Secret once, not at every change of its status', async () => {
    const { tracker, clusters, calls, putSecret, abort } = members();
    clusters.set('fleet/west', cluster('west', initialized()));
    tracker.changed('fleet/west');
    await settled();
    tracker.changed('fleet/west');
    await settled();
    assert.deepEqual(calls, [
      'refuse fleet/west: Cluster fleet/west is ready, and its kubeconfig Secret fleet/west-kubeconfig does not exist',
    ]);
    putSecret('west', 'https://west', '1');
    tracker.secretChanged('fleet', 'west-kubeconfig');
    await settled();
    assert.match(calls[1]!, /^engage fleet\/west /);
    abort.abort();
  });

  it('reports a Secret it may not read on its Cluster', async () => {
    const { tracker, clusters, listed, secrets, calls, abort } = members();
    clusters.set('fleet/east', cluster('east', initialized()));
    listed.set('fleet/east-kubeconfig', { metadata: { name: 'east-kubeconfig', resourceVersion: '1' } } as KubeObject);
    secrets.set('east-kubeconfig', 'forbidden');
    tracker.changed('fleet/east');
    await settled();
    assert.match(calls[0]!, /^refuse fleet\/east: Secret fleet\/east-kubeconfig cannot be read: .*forbidden/);
    tracker.stop();
    abort.abort();
  });

  it('engages one Cluster per member name: another with the same name waits until it is free', async () => {
    const { tracker, clusters, calls, putSecret, abort } = members({ memberName: ({ name }) => name.split('-')[0]! });
    for (const name of ['east-a', 'east-b']) {
      clusters.set(`fleet/${name}`, cluster(name, initialized()));
      putSecret(name, `https://${name}`, '1');
      tracker.changed(`fleet/${name}`);
    }
    await settled();
    assert.deepEqual(
      calls.map((c) => c.split(' ').slice(0, 2).join(' ') + ' ' + c.split(' ').pop()),
      ['engage east Cluster/east-a'],
    );
    clusters.delete('fleet/east-a');
    tracker.changed('fleet/east-a');
    await settled();
    assert.deepEqual(
      calls.slice(1).map((c) => c.split(' ').slice(0, 2).join(' ') + ' ' + c.split(' ').pop()),
      ['disengage east east', 'engage east Cluster/east-b'],
    );
    abort.abort();
  });

  it('engages nothing for a memberName that gives no name', async () => {
    const { tracker, clusters, calls, putSecret, abort } = members({ memberName: () => '' });
    clusters.set('fleet/east', cluster('east', initialized()));
    putSecret('east', 'https://east', '1');
    tracker.changed('fleet/east');
    await settled();
    assert.deepEqual(calls, []);
    tracker.stop();
    abort.abort();
  });
});
