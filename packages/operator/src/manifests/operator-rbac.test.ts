import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigMap, Namespace, Node, Secret } from '../client/kinds.js';
import { CustomResource } from '../crd/custom-resource.decorator.js';
import { operatorRbac } from './operator-rbac.js';
import type { ControllerAccess } from './rbac.js';
import { watchedNamespaces } from './watched-namespace.js';

@CustomResource({ group: 'rbac.example.com', version: 'v1', kind: 'Pool' })
class Pool {}

@CustomResource({ group: 'rbac.example.com', version: 'v1', kind: 'Tenant', scope: 'Cluster' })
class Tenant {}

const base = { name: 'pool-operator', namespace: 'pool-system', leaderElection: { namespace: 'pool-system' } } as const;
const shape = (controllers: ControllerAccess[], watchNamespace?: string) =>
  operatorRbac({ ...base, controllers, ...(watchNamespace ? { watchNamespace } : {}) }).map(
    (m) => `${m.kind}/${m.metadata.name}${m.metadata.namespace ? ` in ${m.metadata.namespace}` : ''}`,
  );

describe('watchedNamespaces', () => {
  it('are the namespaces every controller and every @Watches watches, from their options or the module’s', () => {
    assert.deepEqual(watchedNamespaces([{ resource: Pool }, { resource: ConfigMap }], 'pools'), ['pools']);
    assert.deepEqual(
      watchedNamespaces(
        [
          { resource: Pool, namespace: 'a' },
          { resource: ConfigMap, namespace: 'a' },
        ],
        undefined,
      ),
      ['a'],
    );
    assert.equal(watchedNamespaces([{ resource: Pool }], undefined), undefined, 'all namespaces');
    assert.deepEqual(watchedNamespaces([{ resource: Pool, namespace: 'a' }, { resource: ConfigMap }], 'b'), ['a', 'b']);
    // A @Watches without a namespace of its own watches the module's: all of them here.
    assert.equal(watchedNamespaces([{ resource: Pool, namespace: 'a', watches: [Secret] }], undefined), undefined);
    assert.deepEqual(
      watchedNamespaces([{ resource: Pool, namespace: 'a', watches: [Secret], watchNamespaces: ['a'] }], undefined),
      ['a'],
    );
    assert.deepEqual(watchedNamespaces([{ resource: Pool, watches: [Secret], watchNamespaces: ['elsewhere'] }], 'a'), [
      'a',
      'elsewhere',
    ]);
  });

  it('include every namespace of a controller’s or a @Watches’ list', () => {
    assert.deepEqual(
      watchedNamespaces(
        [
          {
            resource: Pool,
            namespaces: ['team-b', 'team-a'],
            watches: [Secret],
            watchNamespaces: [['shared', 'team-a']],
          },
        ],
        undefined,
      ),
      ['shared', 'team-a', 'team-b'],
    );
  });

  it('are none when a controller’s kind is cluster-scoped; a @Watches of a cluster-scoped kind does not count', () => {
    assert.equal(watchedNamespaces([{ resource: Tenant }], 'pools'), undefined);
    assert.deepEqual(watchedNamespaces([{ resource: Pool, namespace: 'a', watches: [Node] }], undefined), ['a']);
  });
});

describe('operatorRbac', () => {
  it('binds a ClusterRole when the controllers watch every namespace', () => {
    assert.deepEqual(shape([{ resource: Pool, owns: [ConfigMap] }]), [
      'ServiceAccount/pool-operator in pool-system',
      'ClusterRole/pool-operator',
      'ClusterRoleBinding/pool-operator',
      'Role/pool-operator-leader-election in pool-system',
      'RoleBinding/pool-operator-leader-election in pool-system',
    ]);
  });

  it('binds a Role in the one namespace the controllers watch, with the Events there, and no ClusterRole', () => {
    const rbac = operatorRbac({
      ...base,
      controllers: [{ resource: Pool, owns: [ConfigMap], reads: [Secret] }],
      watchNamespace: 'pools',
    });
    assert.deepEqual(
      rbac.map((m) => `${m.kind}/${m.metadata.name}${m.metadata.namespace ? ` in ${m.metadata.namespace}` : ''}`),
      [
        'ServiceAccount/pool-operator in pool-system',
        'Role/pool-operator in pools',
        'RoleBinding/pool-operator in pools',
        'Role/pool-operator-leader-election in pool-system',
        'RoleBinding/pool-operator-leader-election in pool-system',
      ],
    );
    const role = rbac[1]!;
    const resources = (role.rules as { apiGroups: string[]; resources: string[] }[]).flatMap((r) =>
      r.resources.map((x) => `${r.apiGroups[0]}/${x}`),
    );
    assert.deepEqual(resources.sort(), [
      '/configmaps',
      '/events',
      '/secrets',
      'events.k8s.io/events',
      'rbac.example.com/pools',
      'rbac.example.com/pools/finalizers',
      'rbac.example.com/pools/status',
    ]);
    assert.deepEqual(rbac[2]!.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pool-operator' });
    assert.deepEqual(rbac[2]!.subjects, [{ kind: 'ServiceAccount', name: 'pool-operator', namespace: 'pool-system' }]);
  });

  it('keeps a ClusterRole beside the Role for the cluster-scoped kinds a namespaced controller touches', () => {
    const rbac = operatorRbac({
      ...base,
      leaderElection: false,
      controllers: [{ resource: Pool, watches: [Tenant], reads: [Node], writes: [Namespace] }],
      watchNamespace: 'pools',
    });
    assert.deepEqual(
      rbac.map((m) => `${m.kind}/${m.metadata.name}`),
      [
        'ServiceAccount/pool-operator',
        'Role/pool-operator',
        'RoleBinding/pool-operator',
        'ClusterRole/pool-operator',
        'ClusterRoleBinding/pool-operator',
      ],
    );
    const clusterResources = (rbac[3]!.rules as { resources: string[] }[]).flatMap((r) => r.resources).sort();
    assert.deepEqual(clusterResources, ['namespaces', 'nodes', 'tenants']);
  });

  it('binds the same Role in each namespace of a controller’s list', () => {
    const rbac = operatorRbac({
      ...base,
      leaderElection: false,
      controllers: [{ resource: Pool, owns: [ConfigMap], namespaces: ['team-b', 'team-a'] }],
    });
    assert.deepEqual(
      rbac.map((m) => `${m.kind}/${m.metadata.name}${m.metadata.namespace ? ` in ${m.metadata.namespace}` : ''}`),
      [
        'ServiceAccount/pool-operator in pool-system',
        'Role/pool-operator in team-a',
        'RoleBinding/pool-operator in team-a',
        'Role/pool-operator in team-b',
        'RoleBinding/pool-operator in team-b',
      ],
    );
    assert.deepEqual(rbac[1]!.rules, rbac[3]!.rules);
  });

  it('grants the operator’s own namespace only what a @Watches there needs, beside the watched namespace’s Role', () => {
    const controllers: ControllerAccess[] = [
      { resource: Pool, owns: [ConfigMap], watches: [ConfigMap], watchNamespaces: [{ operatorNamespace: true }] },
    ];
    assert.deepEqual(watchedNamespaces(controllers, 'pools', 'pool-system'), ['pool-system', 'pools']);
    assert.equal(watchedNamespaces(controllers, 'pools'), undefined, 'no operator namespace known: cluster-wide');
    const rbac = operatorRbac({ ...base, leaderElection: false, controllers, watchNamespace: 'pools' });
    assert.deepEqual(
      rbac.map((m) => `${m.kind}/${m.metadata.name}${m.metadata.namespace ? ` in ${m.metadata.namespace}` : ''}`),
      [
        'ServiceAccount/pool-operator in pool-system',
        'Role/pool-operator in pool-system',
        'RoleBinding/pool-operator in pool-system',
        'Role/pool-operator in pools',
        'RoleBinding/pool-operator in pools',
      ],
    );
    const own = rbac[1]!.rules as { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    assert.deepEqual(
      own.filter((rule) => !rule.resources.includes('events')),
      [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }],
      'only get, list and watch on the mapped kind; nothing on Pools',
    );
    const watched = rbac[3]!.rules as { resources: string[] }[];
    assert.ok(watched.some((rule) => rule.resources.includes('pools')));
  });

  it('grants a cluster-wide operator a Role for each @Watches that names its namespace, not the kind everywhere', () => {
    // A cluster-scoped kind's controller mapping its own namespace's kubeconfig Secrets.
    const controllers: ControllerAccess[] = [
      {
        resource: Tenant,
        owns: [ConfigMap],
        watches: [Secret, Namespace, ConfigMap],
        watchNamespaces: [{ operatorNamespace: true }, undefined, 'settings'],
      },
    ];
    const rbac = operatorRbac({ ...base, leaderElection: false, controllers });
    assert.deepEqual(
      rbac.map((m) => `${m.kind}/${m.metadata.name}${m.metadata.namespace ? ` in ${m.metadata.namespace}` : ''}`),
      [
        'ServiceAccount/pool-operator in pool-system',
        'ClusterRole/pool-operator',
        'ClusterRoleBinding/pool-operator',
        'Role/pool-operator-watches in pool-system',
        'RoleBinding/pool-operator-watches in pool-system',
        'Role/pool-operator-watches in settings',
        'RoleBinding/pool-operator-watches in settings',
      ],
    );
    const resources = (i: number) => (rbac[i]!.rules as { resources: string[] }[]).flatMap((r) => r.resources).sort();
    assert.ok(!resources(1).includes('secrets'), 'no Secrets cluster-wide');
    assert.ok(resources(1).includes('namespaces') && resources(1).includes('configmaps'), 'owned ConfigMaps stay');
    assert.deepEqual(rbac[3]!.rules, [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] }]);
    assert.deepEqual(rbac[5]!.rules, [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }]);
  });

  it('grants cluster-wide a @Watches whose namespace only a function knows at start-up', () => {
    const rbac = operatorRbac({
      ...base,
      leaderElection: false,
      controllers: [{ resource: Pool, watches: [ConfigMap], watchNamespaces: [{ atStartUp: true }] }],
      watchNamespace: 'pools',
    });
    assert.deepEqual(
      rbac.map((m) => m.kind),
      ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding'],
    );
  });

  it('lets a sharded operator list and watch the shard Leases beside its leader Lease', () => {
    const rules = (sharding: boolean) =>
      operatorRbac({ ...base, controllers: [{ resource: Pool }], sharding }).find(
        (m) => m.kind === 'Role' && m.metadata.name === 'pool-operator-leader-election',
      )!.rules;
    assert.deepEqual(rules(false), [
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create', 'get', 'update'] },
    ]);
    assert.deepEqual(rules(true), [
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        verbs: ['create', 'delete', 'get', 'list', 'update', 'watch'],
      },
    ]);
  });

  it('puts the leader election Role where its Lease lives, and none without leader election', () => {
    const elsewhere = operatorRbac({
      ...base,
      controllers: [{ resource: Pool }],
      leaderElection: { namespace: 'leases' },
    });
    assert.equal(
      elsewhere.find((m) => m.metadata.name === 'pool-operator-leader-election')?.metadata.namespace,
      'leases',
    );
    const none = operatorRbac({ ...base, controllers: [{ resource: Pool }], leaderElection: false });
    assert.ok(!none.some((m) => m.metadata.name.endsWith('-leader-election')));
  });
});

describe('operatorRbac with a fleet', () => {
  it("grants a kubeconfig Secrets provider read access to its namespace's Secrets, and Events there", async () => {
    const { KubeconfigSecrets } = await import('../runtime/fleet/kubeconfig-secrets.js');
    const manifests = operatorRbac({
      ...base,
      controllers: [{ resource: Pool, namespace: 'pools' }],
      fleet: new KubeconfigSecrets({ namespace: 'fleet-system' }).permissions(),
    });
    const role = manifests.find((m) => m.kind === 'Role' && m.metadata.name === 'pool-operator-fleet');
    assert.equal(role?.metadata.namespace, 'fleet-system');
    assert.deepEqual((role as unknown as { rules: unknown }).rules, [
      { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
    ]);
    assert.ok(
      manifests.some(
        (m) =>
          m.kind === 'RoleBinding' &&
          m.metadata.name === 'pool-operator-fleet' &&
          m.metadata.namespace === 'fleet-system',
      ),
    );
  });
});
