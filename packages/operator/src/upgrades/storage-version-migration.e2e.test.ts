// Storage-version migration against a real control plane of its own, whose etcd is read to
// see the version each object is stored in: a kind stored as v1beta1 gets v1 as its storage
// version; the operator's leader rewrites every object as v1 and trims storedVersions, so
// that v1beta1 may be dropped (refused before). Objects written, deleted and created during
// the migration; a leader stopped half-way and the next one finishing; conflicts retried.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type KubeObject, type ResourceDescriptor, silentLogger, Transport } from '@nestor/core';
import { ApiProxy, parallel, TestEnvironment, waitFor } from '@nestor/testing';
import { createOperator, type Operator } from '../compose/create-operator.js';
import type { StorageVersionMigrationOptions } from '../compose/operator-options.js';
import { CustomResource, resourceOf } from '../crd/custom-resource.decorator.js';
import { generationChanged } from '../runtime/controller/predicates.js';
import { storageMigrationRules } from '../manifests/storage-migration-rbac.js';
import { serviceAccountKubeConfig } from '../test-support/e2e-helpers.js';
import { MultiVersionKind } from '../test-support/multi-version-kind.js';
import { parseMetrics, valueOf } from '../test-support/prometheus.js';
import { rewriteObject } from './object-rewrite.js';
import { migrateStorageVersion } from './storage-version-migration.js';

const GROUP = 'migrate.nestor.dev';

// The operator's own kinds: a @CustomResource class each (the CRDs it owns), at v1.
@CustomResource({ group: GROUP, version: 'v1', kind: 'Gadget' })
class Gadget {}
@CustomResource({ group: GROUP, version: 'v1', kind: 'Doohickey' })
class Doohickey {}
@CustomResource({ group: GROUP, version: 'v1', kind: 'Gizmo' })
class Gizmo {}
// Release 1 of an operator, which knows v1beta1 only.
@CustomResource({ group: GROUP, version: 'v1beta1', kind: 'Sprocket' })
class SprocketV1beta1 {}

let env: TestEnvironment;
let ns: string[];
const operators: Operator[] = [];

before(async () => {
  env = await TestEnvironment.start({ useExistingCluster: false });
  ns = [
    await env.createNamespace('migrate-a'),
    await env.createNamespace('migrate-b'),
    await env.createNamespace('migrate-c'),
  ];
});
after(async () => {
  for (const operator of operators) await operator.stop().catch(() => {});
  await env?.stop();
});

/**
 * An operator with leader election whose one controller keeps `status.observed` equal to
 * `spec.size` of every object of `kind` (generation-changed only: the migration's writes
 * change no generation); with `observe: false` it writes nothing.
 */
async function startOperator(
  kind: abstract new () => unknown,
  migrate: StorageVersionMigrationOptions = {},
  observe = true,
): Promise<Operator> {
  const operator = await createOperator({
    kubeConfig: env.kubeconfigPath,
    readFlags: false,
    fieldManager: 'migrate-test',
    metrics: { port: 0 },
    health: { port: 0 },
    leaderElection: {
      id: `migrate-${resourceOf(kind).plural}`,
      namespace: ns[0]!,
      leaseDurationMs: 4000,
      renewDeadlineMs: 3000,
      retryPeriodMs: 500,
      onLost: 'stop',
    },
    migrateStorageVersions: migrate,
    logger: () => silentLogger,
    exit: () => {},
  });
  const resource = resourceOf(kind) as ResourceDescriptor<
    KubeObject & { spec: { size: number }; status?: { observed?: number } }
  >;
  operator.manager.addController({
    name: `observe-${resource.plural}`,
    resource,
    predicates: [generationChanged],
    maxConcurrentReconciles: 4,
    reconcile: async ({ object, client }) => {
      if (observe && object && object.status?.observed !== object.spec.size)
        await client!.patchStatus(object, { observed: object.spec.size });
    },
  });
  operators.push(operator);
  await operator.start();
  return operator;
}

async function metric(operator: Operator, name: string, labels: Record<string, string>): Promise<number | undefined> {
  return valueOf(parseMetrics(await operator.metrics.scrape()), name, labels);
}

const storedVersions = async (kind: MultiVersionKind) => (await kind.read()).status.storedVersions;

describe('storage-version migration by the operator’s leader', () => {
  it('rewrites every object in the new storage version and trims storedVersions: then the old version can be dropped', async () => {
    const kind = new MultiVersionKind(env, GROUP, 'gadgets', 'Gadget');
    const objects = await kind.install(ns, 300);
    await kind.moveStorageToV1(ns[0]!);
    assert.deepEqual(await storedVersions(kind), ['v1beta1', 'v1']);
    assert.deepEqual(await kind.storedCounts(), { [`${GROUP}/v1beta1`]: 300 });
    const refused = await kind.dropV1beta1();
    assert.equal(refused.status, 422, 'the API server refuses to drop a stored version');
    assert.match(refused.text, /storedVersions/);

    // Two replicas: one leads and migrates, the other stands by.
    const replicas = [await startOperator(Gadget), await startOperator(Gadget)];
    await waitFor(async () => (await storedVersions(kind)).length === 1, {
      timeoutMs: 60_000,
      what: 'storedVersions trimmed',
    });
    assert.deepEqual(await storedVersions(kind), ['v1']);
    const stored = await kind.storedAs();
    assert.deepEqual(
      objects.filter((key) => stored.get(key) !== `${GROUP}/v1`),
      [],
      'every object is stored as v1 in etcd',
    );

    const leader = replicas.find((operator) => operator.manager.isLeader)!;
    const standby = replicas.find((operator) => operator !== leader)!;
    const labels = { crd: kind.crd };
    // The controller's own status writes store objects as v1 too: those it wrote before the LIST are current.
    const visited = await Promise.all(
      ['rewritten', 'current', 'gone', 'failed'].map((result) =>
        metric(leader, 'nestor_storage_version_migration_objects_total', { ...labels, result }),
      ),
    );
    assert.equal(visited[0]! + visited[1]!, 300, `rewritten, current, gone, failed: ${visited.join(', ')}`);
    assert.equal(
      await metric(leader, 'nestor_storage_version_migrations_total', { ...labels, outcome: 'migrated' }),
      1,
    );
    assert.equal(
      await metric(standby, 'nestor_storage_version_migrations_total', { ...labels, outcome: 'migrated' }),
      undefined,
      'the standby migrates nothing',
    );
    await waitFor(
      async () => {
        const events = await env.client.request<{
          items: Array<{ reason: string; note: string; regarding: { name: string } }>;
        }>('GET', '/apis/events.k8s.io/v1/namespaces/default/events');
        return events.items.find(
          (event) => event.regarding.name === kind.crd && event.reason === 'StorageVersionMigrated',
        );
      },
      { what: 'the StorageVersionMigrated Event on the CRD' },
    );

    // The old version can go now, and every object reads back whole.
    const dropped = await kind.dropV1beta1();
    assert.equal(dropped.status, 200, dropped.text);
    const listed = await env.client.request<{ items: Array<{ spec: { size: number } }> }>('GET', kind.path('v1'));
    assert.equal(listed.items.length, 300);

    // The controller on the kind still converges.
    await parallel(objects.slice(0, 10), 5, (key) => {
      const [namespace, name] = key.split('/');
      return env.client.request('PATCH', kind.path('v1', namespace, name), { spec: { size: 7 } });
    });
    await waitFor(
      async () => {
        const items = (
          await env.client.request<{ items: Array<{ spec: { size: number }; status?: { observed?: number } }> }>(
            'GET',
            kind.path('v1'),
          )
        ).items;
        return items.every((item) => item.status?.observed === item.spec.size);
      },
      { timeoutMs: 30_000, what: 'the controller to observe every size' },
    );

    // A rewrite of an object stored as v1 already is a no-op: no write in etcd, same resourceVersion.
    const [namespace, name] = objects[0]!.split('/');
    const key = `/registry/${GROUP}/gadgets/${objects[0]}`;
    const [before] = await env.readFromEtcd(key, { exact: true });
    const current = await env.client.request<KubeObject>('GET', kind.path('v1', namespace, name));
    assert.equal(
      await rewriteObject(env.client.transport, kind.path('v1', namespace, name), current.metadata!.resourceVersion),
      'current',
    );
    const [afterRewrite] = await env.readFromEtcd(key, { exact: true });
    assert.equal(afterRewrite!.modRevision, before!.modRevision);
  });

  it('handles objects updated, deleted and created while it runs', async () => {
    const kind = new MultiVersionKind(env, GROUP, 'doohickeys', 'Doohickey');
    const objects = await kind.install(ns, 1000);
    await kind.moveStorageToV1(ns[0]!);
    // 100 writes a second: about 10 s, while the test writes beside it; pages of 100.
    const operator = await startOperator(Doohickey, { writesPerSecond: 100, pageSize: 100 });
    const labels = { crd: kind.crd };
    await waitFor(
      async () =>
        ((await metric(operator, 'nestor_storage_version_migration_objects_total', {
          ...labels,
          result: 'rewritten',
        })) ?? 0) >= 100,
      { timeoutMs: 30_000, what: 'the migration under way' },
    );
    // Objects are listed by namespace, then name: those deleted are in the last namespace, far
    // ahead of the migration (the later pages of a consistent LIST still name them: 404, gone).
    const deleted = objects.filter((_, i) => i % 6 === 5);
    const updated = objects.filter((_, i) => i % 6 === 4);
    const created = Array.from({ length: 50 }, (_, i) => `${ns[i % 3]}/late-${i}`);
    const [path, write] = [
      (key: string, version = 'v1') => kind.path(version, key.split('/')[0], key.split('/')[1]),
      (key: string) =>
        env.client.request('POST', kind.path('v1', key.split('/')[0]), kind.object('v1', key.split('/')[1]!)),
    ];
    await Promise.all([
      parallel(deleted, 4, (key) => env.client.request('DELETE', path(key))),
      // Through v1beta1: a write at any version is stored as the storage version.
      parallel(updated, 4, (key) => env.client.request('PATCH', path(key, 'v1beta1'), { spec: { size: 5 } })),
      parallel(created, 4, write),
    ]);
    assert.equal(
      await metric(operator, 'nestor_storage_version_migration_running', labels),
      1,
      'the writes above ran during the migration (if it ended first, slow it down)',
    );
    await waitFor(async () => (await storedVersions(kind)).length === 1, {
      timeoutMs: 60_000,
      what: 'storedVersions trimmed',
    });
    assert.deepEqual(await storedVersions(kind), ['v1']);
    const stored = await kind.storedAs();
    assert.equal(stored.size, 1000 - deleted.length + created.length);
    assert.deepEqual(
      [...stored.values()].filter((apiVersion) => apiVersion !== `${GROUP}/v1`),
      [],
    );
    const [rewritten, current, gone, failed] = await Promise.all(
      ['rewritten', 'current', 'gone', 'failed'].map((result) =>
        metric(operator, 'nestor_storage_version_migration_objects_total', { ...labels, result }),
      ),
    );
    assert.ok(
      gone! > 0,
      `objects deleted after they were listed are skipped (${rewritten}, ${current}, ${gone}, ${failed})`,
    );
    assert.equal(failed, 0);
    assert.equal(rewritten! + current! + gone!, 1000, 'each object of the consistent LIST visited once');
    assert.equal(
      await metric(operator, 'nestor_storage_version_migrations_total', { ...labels, outcome: 'migrated' }),
      1,
    );
  });

  it('is finished by the next leader when the first stops half-way: what was done is found done', async () => {
    const kind = new MultiVersionKind(env, GROUP, 'gizmos', 'Gizmo');
    await kind.install(ns, 1000);
    await kind.moveStorageToV1(ns[0]!);
    // Controllers that write nothing: every object the first leader rewrote is found as it left it.
    const first = await startOperator(Gizmo, { writesPerSecond: 100 }, false);
    const labels = { crd: kind.crd, result: 'rewritten' };
    await waitFor(
      async () => ((await metric(first, 'nestor_storage_version_migration_objects_total', labels)) ?? 0) >= 300,
      {
        timeoutMs: 30_000,
        what: 'a third of the objects rewritten',
      },
    );
    await first.stop();
    const done = (await metric(first, 'nestor_storage_version_migration_objects_total', labels))!;
    assert.ok(done < 1000, `the first leader stopped half-way (${done} rewritten)`);
    assert.deepEqual(await storedVersions(kind), ['v1beta1', 'v1'], 'nothing trimmed by a migration cut short');

    const next = await startOperator(Gizmo, { writesPerSecond: 100 }, false);
    await waitFor(async () => (await storedVersions(kind)).length === 1, {
      timeoutMs: 60_000,
      what: 'storedVersions trimmed',
    });
    const current = (await metric(next, 'nestor_storage_version_migration_objects_total', {
      ...labels,
      result: 'current',
    }))!;
    const rewritten = (await metric(next, 'nestor_storage_version_migration_objects_total', labels))!;
    assert.equal(current + rewritten, 1000);
    assert.ok(current >= done, `the next leader found the first one's ${done} rewrites done (${current} current)`);
    assert.deepEqual(await kind.storedCounts(), { [`${GROUP}/v1`]: 1000 });
  });
});

describe('storage-version migration, as deployed', () => {
  it('starts when the CRD changes under a running operator, of the release before, which knows v1beta1 only', async () => {
    const kind = new MultiVersionKind(env, GROUP, 'sprockets', 'Sprocket');
    await kind.install(ns, 200);
    const operator = await startOperator(SprocketV1beta1);
    await kind.moveStorageToV1(ns[0]!, { wait: false });
    await waitFor(async () => (await storedVersions(kind)).length === 1, {
      timeoutMs: 60_000,
      what: 'storedVersions trimmed',
    });
    assert.deepEqual(await kind.storedCounts(), { [`${GROUP}/v1`]: 200 });
    assert.equal(
      await metric(operator, 'nestor_storage_version_migrations_total', { crd: kind.crd, outcome: 'migrated' }),
      1,
    );
  });

  it('needs only the rights nestor manifests grants it (the CRD by name, its status, list and patch on the kind)', async () => {
    const kind = new MultiVersionKind(env, GROUP, 'widgets', 'Widget');
    await kind.install(ns, 60);
    await kind.moveStorageToV1(ns[0]!);
    const role = `${kind.crd}-migration`;
    await env.client.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      metadata: { name: role },
      rules: storageMigrationRules([
        { metadata: { name: kind.crd }, spec: { group: GROUP, names: { plural: 'widgets' } } },
      ]),
    });
    const { kubeConfig } = await serviceAccountKubeConfig(env, ns[0]!, 'migrator', role);
    // The RBAC authorizer sees new bindings through its informers: wait until it does.
    const asMigrator = await Transport.fromKubeConfig(kubeConfig);
    await waitFor(async () => (await asMigrator.request('GET', kind.path('v1'))).status === 200, {
      what: 'the ServiceAccount allowed to list the kind',
    });
    asMigrator.close();
    const operator = await createOperator({
      kubeConfig,
      readFlags: false,
      metrics: { port: 0 },
      health: { port: 0 },
      migrateStorageVersions: { kinds: [kind.crd] },
      logger: () => silentLogger,
    });
    operators.push(operator);
    await operator.start();
    await waitFor(async () => (await storedVersions(kind)).length === 1, {
      timeoutMs: 60_000,
      what: 'storedVersions trimmed',
    });
    assert.deepEqual(await kind.storedCounts(), { [`${GROUP}/v1`]: 60 });
  });
});

describe('migrateStorageVersion', () => {
  let proxy: ApiProxy;
  before(async () => {
    proxy = await ApiProxy.start(env.kubeConfig);
  });
  after(() => proxy?.close());

  it('retries conflicts, then trims', async () => {
    const kind = new MultiVersionKind(env, GROUP, 'thingamajigs', 'Thingamajig');
    const objects = await kind.install([ns[1]!], 40);
    await kind.moveStorageToV1(ns[1]!);
    const conflicted = objects.filter((_, i) => i % 10 === 3).map((key) => key.split('/')[1]!);
    const conflict = proxy.inject({
      match: (request) =>
        request.method === 'PATCH' && conflicted.some((name) => request.path.endsWith(`/thingamajigs/${name}`)),
      fault: {
        answer: {
          status: 409,
          body: {
            kind: 'Status',
            apiVersion: 'v1',
            status: 'Failure',
            reason: 'Conflict',
            code: 409,
            message: 'the object has been modified',
          },
        },
      },
      times: conflicted.length * 2,
    });
    const transport = await Transport.fromKubeConfig(proxy.kubeConfig(env.kubeConfig));
    try {
      const result = await migrateStorageVersion(transport, kind.crd, { writesPerSecond: Infinity });
      assert.equal(conflict.hits, conflicted.length * 2, 'two conflicts for each of those objects');
      assert.deepEqual(
        [result.outcome, result.rewritten, result.failed, result.storedVersions],
        ['migrated', 40, 0, ['v1']],
      );
      assert.deepEqual(await kind.storedCounts(), { [`${GROUP}/v1`]: 40 });
    } finally {
      transport.close();
    }
  });
});
