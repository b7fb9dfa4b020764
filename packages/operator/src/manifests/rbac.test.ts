import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigMap, Deployment, Node, Secret, Service } from '../client/kinds.js';
import { CustomResource } from '../crd/custom-resource.decorator.js';
import { leaderElectionRules, rbacRulesFor } from './rbac.js';

@CustomResource({ group: 'cache.example.com', version: 'v1', kind: 'Memcached' })
class Memcached {}

@CustomResource({ group: 'cache.example.com', version: 'v1', kind: 'Backup', scope: 'Cluster' })
class Backup {}

const events = { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] };
const eventsV1 = { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] };

describe('rbacRulesFor', () => {
  it('lets a controller without a kind write what it declares, and watch what it watches', () => {
    const rules = rbacRulesFor([{ writes: [ConfigMap], watches: [ConfigMap] }], { events: false });
    assert.deepEqual(rules, [
      {
        apiGroups: [''],
        resources: ['configmaps'],
        verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
      },
    ]);
  });

  it('grants exactly the verbs the framework uses on each kind, grouped by API group and verbs', () => {
    const rules = rbacRulesFor([
      { resource: Memcached, owns: [Deployment, ConfigMap], watches: [Secret], finalizer: true },
    ]);
    assert.deepEqual(rules, [
      {
        apiGroups: [''],
        resources: ['configmaps'],
        verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
      },
      events,
      { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] },
      {
        apiGroups: ['apps'],
        resources: ['deployments'],
        verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
      },
      {
        apiGroups: ['cache.example.com'],
        resources: ['memcacheds'],
        verbs: ['get', 'list', 'patch', 'update', 'watch'],
      },
      { apiGroups: ['cache.example.com'], resources: ['memcacheds/finalizers'], verbs: ['update'] },
      { apiGroups: ['cache.example.com'], resources: ['memcacheds/status'], verbs: ['get', 'patch', 'update'] },
      eventsV1,
    ]);
  });

  it('leaves out the finalizers subresource when nothing needs it', () => {
    const rules = rbacRulesFor([{ resource: Memcached, watches: [ConfigMap] }]);
    assert.ok(!rules.some((r) => r.resources.includes('memcacheds/finalizers')));
    // With owned kinds it is there: apply({ owner }) sets blockOwnerDeletion.
    const owning = rbacRulesFor([{ resource: Memcached, owns: [ConfigMap] }]);
    assert.ok(owning.some((r) => r.resources.includes('memcacheds/finalizers') && r.verbs.join() === 'update'));
  });

  it('merges the kinds several controllers share: the union of their verbs, one rule per verb set', () => {
    const rules = rbacRulesFor([
      { resource: Memcached, owns: [ConfigMap], watches: [Service] },
      { resource: Backup, watches: [ConfigMap, Memcached], owns: [Service] },
    ]);
    const verbsOf = (resource: string) => rules.find((r) => r.resources.includes(resource))?.verbs;
    assert.deepEqual(verbsOf('configmaps'), ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']);
    assert.deepEqual(verbsOf('services'), ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']);
    assert.deepEqual(verbsOf('memcacheds'), ['get', 'list', 'patch', 'update', 'watch']);
    assert.deepEqual(rules.find((r) => r.resources.includes('configmaps'))?.resources, ['configmaps', 'services']);
    assert.deepEqual(rules.find((r) => r.resources.includes('backups'))?.resources, ['backups', 'memcacheds']);
    for (const rule of rules) assert.equal(rule.apiGroups.length, 1);
    const resources = rules.flatMap((r) => r.resources.map((resource) => `${r.apiGroups[0]}/${resource}`));
    assert.equal(new Set(resources).size, resources.length, 'each resource once');
  });

  it('grants only events (events.k8s.io, and core/v1 for the fallback) to a controller fed by @Source streams alone', () => {
    assert.deepEqual(rbacRulesFor([{}]), [events, eventsV1]);
    assert.deepEqual(rbacRulesFor([{}], { events: false }), []);
  });

  it('lets a controller read what it declares in `reads` (get, list, watch) and write nothing there', () => {
    const rules = rbacRulesFor([{ resource: Memcached, reads: [Secret, Node] }], { events: false });
    assert.deepEqual(
      rules.filter((r) => r.apiGroups[0] === ''),
      [{ apiGroups: [''], resources: ['nodes', 'secrets'], verbs: ['get', 'list', 'watch'] }],
    );
    // A kind it both reads and writes gets the union.
    const both = rbacRulesFor([{ reads: [Secret], writes: [Secret] }], { events: false });
    assert.deepEqual(both, [
      {
        apiGroups: [''],
        resources: ['secrets'],
        verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
      },
    ]);
  });

  it('splits the rules by scope: namespaced kinds and Events for a Role, cluster-scoped kinds for a ClusterRole', () => {
    const controllers = [{ resource: Memcached, owns: [ConfigMap], watches: [Backup], reads: [Node] }];
    const all = rbacRulesFor(controllers);
    const namespaced = rbacRulesFor(controllers, { scope: 'namespaced' });
    const cluster = rbacRulesFor(controllers, { scope: 'cluster' });
    const resources = (rules: typeof all) =>
      rules.flatMap((r) => r.resources.map((x) => `${r.apiGroups[0]}/${x}`)).sort();
    assert.deepEqual(resources(namespaced), [
      '/configmaps',
      '/events',
      'cache.example.com/memcacheds',
      'cache.example.com/memcacheds/finalizers',
      'cache.example.com/memcacheds/status',
      'events.k8s.io/events',
    ]);
    assert.deepEqual(cluster, [
      { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['cache.example.com'], resources: ['backups'], verbs: ['get', 'list', 'watch'] },
    ]);
    assert.deepEqual(resources([...namespaced, ...cluster]), resources(all), 'together, every rule');
  });

  it('names what is not a kind', () => {
    class NotAKind {}
    assert.throws(() => rbacRulesFor([{ resource: NotAKind }]), /NotAKind is not a kind/);
  });

  it('gives leader election get, create and update on Leases', () => {
    assert.deepEqual(leaderElectionRules(), [
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create', 'get', 'update'] },
    ]);
  });
});
