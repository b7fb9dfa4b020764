// The TeamSpace reconciler without an API server: a fakeFleet stands in for the injected
// Fleet, with a FakeKubeClient per member cluster and one for the management cluster. The
// member watches are played by handing the controller's @Watches methods the events their
// informers would deliver. What needs real API servers (schema and defaults, RBAC, namespace
// deletion, engagement) is teamspace.e2e.test.ts's.
// node:test here (this repository's runner); with Vitest, import describe and it from 'vitest'.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeApiError, Namespace, type ObjectRef, resourceOf, RoleBinding, type ResourceEvent } from '@nestor/operator';
import { fakeFleet, FakeKubeClient, reconcileContext } from '@nestor/operator/fake';
import type { Engagement } from '@nestor/operator/fleet';
import { Subject } from 'rxjs';
import { CONFLICT_RETRY_MS } from './member-namespace.js';
import { NOT_IN_FLEET } from './member-standing.js';
import { quotaSpecOrLabelsChanged, TeamSpaceController } from './teamspace.controller.js';
import { type NamespaceObject, ResourceQuota, type ResourceQuotaObject, TEAMSPACE_LABEL } from './teamspace.objects.js';
import { TeamSpace, type TeamSpaceSpec } from './teamspace.resource.js';

const Kind = resourceOf(TeamSpace);

/** A TeamSpace as the API server returns it: the fake applies no defaults, so all are here. */
function teamSpace(spec: Partial<TeamSpaceSpec> = {}, name = 'payments'): TeamSpace {
  return {
    apiVersion: 'teams.example.com/v1alpha1',
    kind: 'TeamSpace',
    metadata: { name },
    spec: {
      clusters: ['east', 'west'],
      namespace: 'payments',
      quota: { cpu: '2', memory: '4Gi', pods: 10 },
      access: { clusterRole: 'edit', groups: ['payments-devs'] },
      ...spec,
    },
  };
}

const member = () => new FakeKubeClient({ kinds: [ResourceQuota] });

function setUp(options: { members?: string[]; failed?: Record<string, string>; spaces?: TeamSpace[] } = {}) {
  const local = new FakeKubeClient({ kinds: [TeamSpace], objects: options.spaces ?? [teamSpace()] });
  const members = Object.fromEntries((options.members ?? ['east', 'west']).map((name) => [name, member()]));
  const engagements = new Subject<Engagement>();
  const fleet = fakeFleet({ members, local, failed: options.failed ?? {}, engagements });
  const controller = new TeamSpaceController(fleet);
  /** The TeamSpaces the controller's @Source asks to reconcile when the fleet tells of `cluster`. */
  const told = (cluster: string, type: Engagement['type'] = 'engaged') => {
    const requests: ObjectRef[][] = [];
    const subscription = controller.membersChanged().subscribe((refs) => requests.push(refs));
    engagements.next({ cluster, type });
    subscription.unsubscribe();
    return requests.flat();
  };
  const read = async (name = 'payments') => (await local.get(Kind, { name }))!;
  /** One reconcile, as the runtime runs it: with the TeamSpace as it is now. */
  const reconcile = async (name = 'payments') => {
    const current = await read(name);
    return controller.reconcile(current, reconcileContext(current, { client: local }));
  };
  /** The member watches deliver what each member holds now, as an informer's replay does. */
  const watchesSee = async () => {
    for (const [cluster, client] of Object.entries(members)) {
      for (const ns of await client.list(Namespace, { labelSelector: TEAMSPACE_LABEL })) {
        controller.namespaceChanged(ns as NamespaceObject, { type: 'added', object: ns as NamespaceObject, cluster });
      }
    }
  };
  return { local, members, fleet, controller, read, reconcile, watchesSee, told };
}

const entries = (space: TeamSpace) => space.status?.clusters?.map((c) => [c.name, c.ready, c.message]);
const ready = (space: TeamSpace) => space.status?.conditions?.find((c) => c.type === 'Ready');
const events = (client: FakeKubeClient) => client.recordedEvents.map((e) => `${e.type} ${e.reason}: ${e.message}`);

describe('TeamSpaceController', () => {
  it('applies the namespace, its ResourceQuota and RoleBinding in each selected member, and reports each cluster', async () => {
    const { members, reconcile, read } = setUp();
    assert.equal(await reconcile(), undefined, 'nothing to wait for');

    for (const name of ['east', 'west']) {
      const client = members[name]!;
      const ns = await client.get(Namespace, { name: 'payments' });
      assert.equal(ns?.metadata?.labels?.[TEAMSPACE_LABEL], 'payments');
      const quota = await client.get(ResourceQuota, { namespace: 'payments', name: 'teamspace' });
      assert.deepEqual(quota?.spec?.hard, { 'requests.cpu': '2', 'requests.memory': '4Gi', pods: '10' });
      const binding = await client.get(RoleBinding, { namespace: 'payments', name: 'teamspace' });
      assert.equal(binding?.roleRef.name, 'edit');
      assert.deepEqual(
        binding?.subjects?.map((s) => [s.kind, s.name]),
        [['Group', 'payments-devs']],
      );
    }
    const space = await read();
    assert.deepEqual(entries(space), [
      ['east', true, 'namespace payments with its ResourceQuota and RoleBinding'],
      ['west', true, 'namespace payments with its ResourceQuota and RoleBinding'],
    ]);
    assert.equal(ready(space)?.status, 'True');
    assert.equal(space.status?.observedGeneration, space.metadata.generation);
  });

  it('says why a cluster gets nothing: out of the fleet, or not engaged, and waits to be told of it', async () => {
    const { members, reconcile, read } = setUp({
      members: ['east'],
      failed: { north: 'dial tcp 10.0.0.9:6443: connect: connection refused' },
      spaces: [teamSpace({ clusters: ['east', 'north', 'south'] })],
    });
    assert.equal(await reconcile(), undefined, 'no polling: the fleet tells when north or south changes');
    const space = await read();
    assert.deepEqual(entries(space), [
      ['east', true, 'namespace payments with its ResourceQuota and RoleBinding'],
      ['north', false, 'not engaged: dial tcp 10.0.0.9:6443: connect: connection refused'],
      ['south', false, NOT_IN_FLEET],
    ]);
    assert.equal(ready(space)?.status, 'False');
    assert.equal(ready(space)?.message, '1/3 clusters ready; not ready: north, south');
    assert.ok(await members['east']!.get(Namespace, { name: 'payments' }));
  });

  it('never adopts a namespace it did not make', async () => {
    const { members, reconcile, read } = setUp();
    members['west']!.seed({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'payments' } });
    assert.deepEqual(await reconcile(), { requeueAfter: CONFLICT_RETRY_MS });
    assert.deepEqual(entries(await read())?.[1], [
      'west',
      false,
      'namespace payments already exists (not made by a TeamSpace): choose another spec.namespace',
    ]);
    const west = members['west']!;
    assert.equal((await west.get(Namespace, { name: 'payments' }))?.metadata?.labels, undefined, 'not labelled');
    assert.deepEqual(
      west.writes.map((w) => w.verb),
      [],
      'nothing written in west',
    );
  });

  it('removes the namespace from a cluster taken out of spec.clusters, and from the old name after a rename', async () => {
    const { local, members, reconcile, read, watchesSee } = setUp();
    await reconcile();
    await watchesSee();

    await local.patch(Kind, { name: 'payments' }, { spec: { clusters: ['east'] } });
    await reconcile();
    assert.equal(await members['west']!.get(Namespace, { name: 'payments' }), undefined);
    assert.ok(await members['east']!.get(Namespace, { name: 'payments' }));
    assert.deepEqual(
      entries(await read())?.map(([name]) => name),
      ['east'],
    );
    assert.deepEqual(events(local), [
      'Normal NamespaceRemoved: Deleted namespace payments from cluster west: the TeamSpace no longer selects it',
    ]);

    await local.patch(Kind, { name: 'payments' }, { spec: { namespace: 'payments-v2' } });
    await reconcile();
    const east = members['east']!;
    assert.equal(await east.get(Namespace, { name: 'payments' }), undefined, 'the old name is gone');
    assert.ok(await east.get(Namespace, { name: 'payments-v2' }));
  });

  it('reads a namespace before its first apply only: the watch then knows it is this TeamSpace’s', async () => {
    const { members, reconcile, watchesSee } = setUp({
      members: ['east'],
      spaces: [teamSpace({ clusters: ['east'] })],
    });
    await reconcile();
    await watchesSee();
    const east = members['east']!;
    const before = east.actions.length;
    await reconcile();
    assert.deepEqual(
      east.actions.slice(before).map((a) => a.verb),
      ['apply', 'apply', 'apply'],
    );
  });

  it('replaces the RoleBinding when the ClusterRole changes, as its roleRef cannot', async () => {
    const { local, members, reconcile, watchesSee } = setUp({
      members: ['east'],
      spaces: [teamSpace({ clusters: ['east'] })],
    });
    await reconcile();
    await watchesSee();
    const east = members['east']!;
    // What the API server answers to an apply that changes a roleRef.
    let refused = false;
    east.intercept((action) => {
      if (action.verb === 'apply' && action.resource.startsWith('rolebindings') && !refused) {
        refused = true;
        throw new KubeApiError(
          422,
          'Invalid',
          'RoleBinding.rbac.authorization.k8s.io "teamspace" is invalid: roleRef: Invalid value: cannot change roleRef',
          'PATCH',
          '/apis/rbac.authorization.k8s.io/v1/namespaces/payments/rolebindings/teamspace',
        );
      }
    });
    await local.patch(
      Kind,
      { name: 'payments' },
      { spec: { access: { clusterRole: 'view', groups: ['payments-devs'] } } },
    );
    await reconcile();
    assert.equal((await east.get(RoleBinding, { namespace: 'payments', name: 'teamspace' }))?.roleRef.name, 'view');
    assert.deepEqual(
      east.writes.slice(-3).map((w) => `${w.verb} ${w.resource}`),
      [
        'apply rolebindings.rbac.authorization.k8s.io',
        'delete rolebindings.rbac.authorization.k8s.io',
        'apply rolebindings.rbac.authorization.k8s.io',
      ],
    );
  });

  it('reports a member that refuses a write, still places the others, and fails the reconcile for a retry', async () => {
    const { members, reconcile, read } = setUp();
    members['west']!.intercept((action) => {
      if (action.verb === 'apply' && action.resource.startsWith('rolebindings')) {
        throw new KubeApiError(
          403,
          'Forbidden',
          'user cannot bind ClusterRole "edit"',
          'PATCH',
          '/apis/rbac.authorization.k8s.io/v1/namespaces/payments/rolebindings/teamspace',
        );
      }
    });
    await assert.rejects(reconcile(), /cluster west: 403 Forbidden: user cannot bind ClusterRole "edit"/);
    assert.deepEqual(entries(await read()), [
      ['east', true, 'namespace payments with its ResourceQuota and RoleBinding'],
      ['west', false, '403 Forbidden: user cannot bind ClusterRole "edit"'],
    ]);
  });

  it('removes the namespace from every cluster on deletion, and names one that left the fleet', async () => {
    const { local, members, controller, reconcile, read, watchesSee, told } = setUp();
    await reconcile();
    await watchesSee();
    // A namespace it made in a cluster whose Secret has gone since.
    const away = {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'payments', labels: { [TEAMSPACE_LABEL]: 'payments' } },
    };
    controller.namespaceChanged(away, { type: 'added', object: away, cluster: 'gone' });

    const deleting = {
      ...(await read()),
      metadata: { ...(await read()).metadata, deletionTimestamp: new Date().toISOString() },
    } as TeamSpace;
    await controller.removeEverywhere(deleting, reconcileContext(deleting, { client: local }));
    for (const name of ['east', 'west']) {
      assert.equal(await members[name]!.get(Namespace, { name: 'payments' }), undefined, `removed from ${name}`);
    }
    assert.deepEqual(events(local).sort(), [
      'Normal NamespaceRemoved: Deleted namespace payments from cluster east: the TeamSpace is deleted',
      'Normal NamespaceRemoved: Deleted namespace payments from cluster west: the TeamSpace is deleted',
      'Warning NamespaceLeft: Namespace payments is left in cluster gone: the cluster is no longer in the fleet',
    ]);
    // A change of its clusters no longer concerns it.
    assert.deepEqual(told('east'), []);
  });

  it('holds the deletion while a member of the fleet that has its namespace cannot be reached', async () => {
    const { local, controller, reconcile, read } = setUp({ failed: { north: 'connection refused' } });
    await reconcile();
    const mine = {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'payments', labels: { [TEAMSPACE_LABEL]: 'payments' } },
    };
    controller.namespaceChanged(mine, { type: 'added', object: mine, cluster: 'north' });
    const space = await read();
    await assert.rejects(
      controller.removeEverywhere(space, reconcileContext(space, { client: local })),
      /cluster north: cannot remove namespace payments yet: not engaged: connection refused/,
    );
  });

  it("maps a member's engagement to the TeamSpaces that select it, and member objects to their TeamSpace", async () => {
    const { controller, reconcile, told } = setUp({
      spaces: [teamSpace(), teamSpace({ clusters: ['west'], namespace: 'search' }, 'search')],
    });
    await reconcile('payments');
    await reconcile('search');
    assert.deepEqual(told('west'), [{ name: 'payments' }, { name: 'search' }]);
    assert.deepEqual(told('east', 'disengaged'), [{ name: 'payments' }]);
    assert.deepEqual(told('north'), []);

    // A label moved to another TeamSpace: both are reconciled.
    const ns = (team: string): NamespaceObject => ({
      metadata: { name: 'shared', labels: { [TEAMSPACE_LABEL]: team } },
    });
    const moved: ResourceEvent<NamespaceObject> = {
      type: 'updated',
      object: ns('search'),
      old: ns('payments'),
      cluster: 'west',
    };
    assert.deepEqual(controller.namespaceChanged(ns('search'), moved), [{ name: 'search' }, { name: 'payments' }]);
  });

  it('takes a quota whose status alone changed (usage) for no drift', async () => {
    const quota = (pods: string, used: string): ResourceQuotaObject => ({
      metadata: { name: 'teamspace', namespace: 'payments', labels: { [TEAMSPACE_LABEL]: 'payments' } },
      spec: { hard: { pods } },
      status: { used: { pods: used } },
    });
    const passes = quotaSpecOrLabelsChanged;
    assert.equal(passes({ type: 'updated', object: quota('10', '3'), old: quota('10', '2') }), false);
    assert.equal(passes({ type: 'updated', object: quota('99', '2'), old: quota('10', '2') }), true);
    assert.equal(passes({ type: 'deleted', object: quota('10', '2') }), true);
  });
});
