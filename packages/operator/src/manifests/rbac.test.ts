import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigMap, Deployment, Secret, Service } from '../client/kinds.js';
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
