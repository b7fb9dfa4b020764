import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ConfigMap,
  Deployment,
  KubeApiError,
  KubeClient,
  withFinalizer,
  type KubeObject,
  type ReconcileRequest,
} from '../runtime/index.js';
import { FakeKubeClient, fakeKubeClient, reconcileContext } from './index.js';

type Obj = KubeObject & {
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  data?: Record<string, string>;
};

const Widget = {
  group: 'example.com',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
} as const;

const widget = (name: string, spec: Record<string, unknown> = { size: 1 }, extra: Partial<Obj> = {}): Obj => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name, namespace: 'ns', ...extra.metadata },
  spec,
  ...(extra.status ? { status: extra.status } : {}),
});

const configMap = (name: string, labels: Record<string, string> = {}, namespace = 'ns'): Obj => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace, labels },
  data: { a: '1' },
});

/** The KubeApiError a call fails with. */
async function apiError(call: Promise<unknown>): Promise<KubeApiError> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof KubeApiError, `expected a KubeApiError, got ${String(error)}`);
    return error;
  }
  assert.fail('the call succeeded');
}

describe('FakeKubeClient', () => {
  it('is a KubeClient as the real client is, with no transport behind it to reach a network', () => {
    const fake = fakeKubeClient();
    const client: KubeClient = fake; // compiles only while the fake implements every member of KubeClient
    assert.ok(client instanceof KubeClient);
    assert.equal('transport' in fake, false);
  });

  it('lists by a field index declared on it, as the cache does, and refuses one it was not given', async () => {
    const kube = fakeKubeClient({
      kinds: [Widget],
      objects: [
        widget('a', { secret: 'db' }),
        widget('b', { secret: 'cache' }),
        { ...widget('c', { secret: 'db' }), metadata: { name: 'c', namespace: 'other' } },
      ],
    }).indexField(Widget, 'secret', (w: Obj) => w.spec?.['secret'] as string | undefined);
    const names = (list: Obj[]) => list.map((w) => w.metadata!.name).sort();
    assert.deepEqual(names(await kube.list<Obj>(Widget, { namespace: 'ns', index: { secret: 'db' } })), ['a']);
    assert.deepEqual(names(await kube.list<Obj>(Widget, { index: { secret: 'db' } })), ['a', 'c']);
    await assert.rejects(
      kube.list(Widget, { index: { owner: 'x' } }),
      /no field index named "owner": declare it on the fake \(fake.indexField\)/,
    );
    await assert.rejects(kube.list(Widget, { index: { secret: 'db', other: 'x' } }), /one field index at a time/);
  });

  it('creates with uid, resourceVersion, generation and creationTimestamp, dropping status of a kind with a status subresource', async () => {
    const now = new Date('2026-01-02T03:04:05.678Z');
    const fake = fakeKubeClient({ kinds: [Widget], now: () => now });
    const created = await fake.create(widget('a', { size: 1 }, { status: { ready: true } }));
    assert.match(created.metadata!.uid!, /^[0-9a-f-]{36}$/);
    assert.equal(created.metadata!.generation, 1);
    assert.equal(created.metadata!.creationTimestamp, '2026-01-02T03:04:05Z');
    assert.equal(created.status, undefined);
    assert.ok(Number(created.metadata!.resourceVersion) > 0);
    const cm = await fake.create(configMap('c'));
    assert.equal(cm.metadata!.generation, undefined, 'ConfigMaps carry no generation');
    assert.ok(Number(cm.metadata!.resourceVersion) > Number(created.metadata!.resourceVersion));
  });

  it('stores what a JSON round trip would: a Date written comes back as its ISO string, on every write', async () => {
    // client-node's own model types declare Date: a test that builds objects with them must
    // not read back a Date that no API server would return.
    const at = new Date('2026-01-02T03:04:05.678Z');
    const iso = '2026-01-02T03:04:05.678Z';
    const fake = fakeKubeClient({ kinds: [Widget] });
    fake.seed({ ...widget('seeded'), status: { since: at } } as Obj);
    const seeded = await fake.get(Widget, { namespace: 'ns', name: 'seeded' });
    assert.equal((seeded as Obj).status!.since, iso);

    const created = await fake.create({ ...widget('a', { at, gone: undefined }) } as Obj);
    assert.deepEqual(created.spec, { at: iso }, 'the Date a string, the undefined field dropped');
    assert.deepEqual(((await fake.get(Widget, { namespace: 'ns', name: 'a' })) as Obj).spec, { at: iso });

    const replaced = await fake.replace({ ...created, spec: { at, size: 2 } });
    assert.deepEqual(replaced.spec, { at: iso, size: 2 });
    const patched = await fake.patch(Widget, { namespace: 'ns', name: 'a' }, { spec: { later: at } });
    assert.equal((patched as Obj).spec!.later, iso);
    const jsonPatched = await fake.patch(
      Widget,
      { namespace: 'ns', name: 'a' },
      [{ op: 'add', path: '/spec/viaJson', value: at }],
      'json',
    );
    assert.equal((jsonPatched as Obj).spec!.viaJson, iso);
    const status = await fake.patchStatus(created, { finishedAt: at });
    assert.equal(status.status!.finishedAt, iso);
    const applied = await fake.apply(widget('b', { at }));
    assert.deepEqual(applied.spec, { at: iso });
    const appliedStatus = await fake.applyStatus(applied, { readyAt: at });
    assert.equal(appliedStatus.status!.readyAt, iso);
    for (const object of fake.objects(Widget) as Obj[]) {
      assert.ok(!JSON.stringify(object, (_k, v: unknown) => (v instanceof Date ? 'DATE' : v)).includes('DATE'));
    }
  });

  it('refuses a second create (409 AlreadyExists), names from generateName, needs a namespace', async () => {
    const fake = fakeKubeClient({ kinds: [Widget] });
    await fake.create(widget('a'));
    const conflict = await apiError(fake.create(widget('a')));
    assert.equal(conflict.status, 409);
    assert.equal(conflict.reason, 'AlreadyExists');
    const generated = await fake.create({ ...widget(''), metadata: { generateName: 'w-', namespace: 'ns' } } as Obj);
    assert.match(generated.metadata!.name!, /^w-[0-9a-f]{5}$/);
    assert.equal((await apiError(fake.create({ ...widget('x'), metadata: { name: 'x' } }))).status, 422);
  });

  it('hands out copies: changing what get returned changes nothing stored', async () => {
    const fake = fakeKubeClient({ kinds: [Widget], objects: [widget('a')] });
    const read = (await fake.get<Obj>(Widget, { namespace: 'ns', name: 'a' }))!;
    read.spec!.size = 99;
    assert.equal((await fake.get<Obj>(Widget, { namespace: 'ns', name: 'a' }))!.spec!.size, 1);
    assert.equal(await fake.get(Widget, { namespace: 'other', name: 'a' }), undefined);
  });

  it('replace: 409 on a stale resourceVersion, status kept, generation bumped by spec changes only', async () => {
    const fake = fakeKubeClient({ kinds: [Widget] });
    const v1 = await fake.create(widget('a'));
    await fake.patchStatus(v1, { ready: true });
    const current = (await fake.get<Obj>(Widget, { namespace: 'ns', name: 'a' }))!;

    const stale = await apiError(fake.replace({ ...v1, spec: { size: 2 } }));
    assert.equal(stale.status, 409);
    assert.match(stale.message, /the object has been modified; please apply your changes to the latest version/);

    const relabelled = await fake.replace({ ...current, metadata: { ...current.metadata, labels: { x: 'y' } } });
    assert.equal(relabelled.metadata!.generation, 1, 'a metadata change does not bump the generation');
    const resized = await fake.replace({ ...relabelled, spec: { size: 2 }, status: { ready: false } });
    assert.equal(resized.metadata!.generation, 2);
    assert.deepEqual(resized.status, { ready: true }, 'the main resource does not write status');
    assert.equal((await apiError(fake.replace(widget('missing')))).status, 404);
  });

  it('a write that changes nothing keeps the resourceVersion', async () => {
    const fake = fakeKubeClient({ kinds: [Widget] });
    const created = await fake.create(widget('a'));
    const same = await fake.replace(created);
    assert.equal(same.metadata!.resourceVersion, created.metadata!.resourceVersion);
    const patched = await fake.patch<Obj>(Widget, { namespace: 'ns', name: 'a' }, { spec: { size: 1 } });
    assert.equal(patched.metadata!.resourceVersion, created.metadata!.resourceVersion);
  });

  it('lists by namespace, label selector and metadata field selector, sorted, with kind set', async () => {
    const fake = fakeKubeClient({
      objects: [
        configMap('b', { app: 'web', tier: 'front' }),
        configMap('a', { app: 'web' }),
        configMap('c', { app: 'db' }),
        configMap('d', {}, 'other'),
      ],
    });
    const names = async (options: Parameters<FakeKubeClient['list']>[1]) =>
      (await fake.list(ConfigMap, options)).map((o) => `${o.metadata!.namespace}/${o.metadata!.name}`);
    assert.deepEqual(await names({}), ['ns/a', 'ns/b', 'ns/c', 'other/d']);
    assert.deepEqual(await names({ namespace: 'ns', labelSelector: 'app=web' }), ['ns/a', 'ns/b']);
    assert.deepEqual(await names({ labelSelector: 'app!=web' }), ['ns/c', 'other/d']);
    assert.deepEqual(await names({ labelSelector: 'app in (db, web),!tier' }), ['ns/a', 'ns/c']);
    assert.deepEqual(await names({ labelSelector: 'app notin (web),app' }), ['ns/c']);
    assert.deepEqual(await names({ fieldSelector: 'metadata.name=d' }), ['other/d']);
    assert.equal((await fake.list(ConfigMap))[0]!.kind, 'ConfigMap');
    assert.equal((await apiError(fake.list(ConfigMap, { labelSelector: 'a b c' }))).status, 400);
    await assert.rejects(
      fake.list(ConfigMap, { fieldSelector: 'spec.nodeName=x' }),
      /does not model the field selector/,
    );
  });

  it('merge patches (null deletes), with a resourceVersion in the patch as a precondition', async () => {
    const fake = fakeKubeClient({ kinds: [Widget] });
    const created = await fake.create(widget('a', { size: 1, mode: 'fast' }));
    const ref = { namespace: 'ns', name: 'a' };
    const patched = await fake.patch<Obj>(Widget, ref, { spec: { size: 3, mode: null } });
    assert.deepEqual(patched.spec, { size: 3 });
    assert.equal(patched.metadata!.generation, 2);
    const stale = { metadata: { resourceVersion: created.metadata!.resourceVersion }, spec: { size: 4 } };
    assert.equal((await apiError(fake.patch(Widget, ref, stale))).status, 409);
    assert.equal((await apiError(fake.patch(Widget, { namespace: 'ns', name: 'nope' }, {}))).status, 404);
  });

  it('JSON patches, a failed test answering 422 as the API server does', async () => {
    const fake = fakeKubeClient({ objects: [configMap('a')] });
    const ref = { namespace: 'ns', name: 'a' };
    const patched = await fake.patch<Obj>(
      ConfigMap,
      ref,
      [
        { op: 'test', path: '/data/a', value: '1' },
        { op: 'add', path: '/data/b', value: '2' },
        { op: 'remove', path: '/data/a' },
        { op: 'add', path: '/metadata/labels/x~1y', value: 'z' },
      ],
      'json',
    );
    assert.deepEqual(patched.data, { b: '2' });
    assert.deepEqual(patched.metadata!.labels, { 'x/y': 'z' });
    const failed = await apiError(
      fake.patch(ConfigMap, ref, [{ op: 'test', path: '/data/b', value: 'other' }], 'json'),
    );
    assert.equal(failed.status, 422);
  });

  it('status writes change only status, and bump no generation; kinds without a status subresource have no /status', async () => {
    const fake = fakeKubeClient({ kinds: [Widget], objects: [configMap('c')] });
    const created = await fake.create(widget('a'));
    const updated = await fake.patchStatus({ ...created, spec: { size: 50 } }, { ready: true });
    assert.deepEqual(updated.status, { ready: true });
    assert.deepEqual(updated.spec, { size: 1 });
    assert.equal(updated.metadata!.generation, 1);
    assert.notEqual(updated.metadata!.resourceVersion, created.metadata!.resourceVersion);
    const cm = (await fake.get<Obj>(ConfigMap, { namespace: 'ns', name: 'c' }))!;
    assert.equal((await apiError(fake.patchStatus(cm, { x: 1 }))).status, 404);
  });

  it('server-side apply creates, merges, removes what this manager stopped applying, and keeps what others set', async () => {
    const fake = fakeKubeClient({ kinds: [Widget] });
    const first = await fake.apply(widget('a', { size: 1, mode: 'fast', tags: ['x', 'y'] }));
    assert.equal(first.metadata!.generation, 1);
    // Someone else (kubectl label) adds a label; our next apply neither owns nor removes it.
    await fake.patch(Widget, { namespace: 'ns', name: 'a' }, { metadata: { labels: { team: 'blue' } } });
    const second = await fake.apply(widget('a', { size: 2, tags: ['z'] }));
    assert.deepEqual(second.spec, { size: 2, tags: ['z'] }, 'mode left the applied fields: removed; lists replaced');
    assert.deepEqual(second.metadata!.labels, { team: 'blue' });
    assert.equal(second.metadata!.generation, 2);
    const again = await fake.apply(widget('a', { size: 2, tags: ['z'] }));
    assert.equal(
      again.metadata!.resourceVersion,
      second.metadata!.resourceVersion,
      'an identical apply changes nothing',
    );
    const status = await fake.applyStatus(again, { phase: 'Ready' });
    assert.deepEqual(status.status, { phase: 'Ready' });
    assert.equal(status.metadata!.generation, 2);
  });

  it('apply sets the controller owner reference', async () => {
    const fake = fakeKubeClient({ kinds: [Widget] });
    const owner = await fake.create(widget('owner'));
    const owned = await fake.apply(configMap('owned'), { owner });
    assert.deepEqual(owned.metadata!.ownerReferences, [
      {
        apiVersion: 'example.com/v1',
        kind: 'Widget',
        name: 'owner',
        uid: owner.metadata!.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
  });

  it('delete: finalizers hold the object with a deletionTimestamp, the last one removed deletes it', async () => {
    const fake = fakeKubeClient({ kinds: [Widget] });
    const ref = { namespace: 'ns', name: 'a' };
    const created = await fake.create(widget('a', {}, { metadata: { finalizers: ['example.com/cleanup'] } }));
    assert.equal(await fake.delete(Widget, ref), true);
    const deleting = (await fake.get<Obj>(Widget, ref))!;
    assert.ok(deleting.metadata!.deletionTimestamp);
    assert.notEqual(deleting.metadata!.resourceVersion, created.metadata!.resourceVersion);
    const refused = await apiError(fake.addFinalizer(deleting, 'example.com/other'));
    assert.equal(refused.status, 422);
    assert.match(refused.message, /no new finalizers can be added if the object is being deleted/);
    await fake.removeFinalizer(deleting, 'example.com/cleanup');
    assert.equal(await fake.get(Widget, ref), undefined);
    assert.equal(await fake.delete(Widget, ref), false);
    await fake.create(widget('b'));
    assert.equal(await fake.delete(Widget, { namespace: 'ns', name: 'b' }), true);
    assert.deepEqual(fake.objects(Widget), []);
  });

  it('runs the runtime’s withFinalizer through a whole life: finalizer added, cleanup on delete, object gone', async () => {
    const fake = fakeKubeClient({ kinds: [Widget] });
    const cleaned: string[] = [];
    const reconciled: string[] = [];
    const reconcile = withFinalizer<Obj>(async ({ object }) => void reconciled.push(object!.metadata!.name!), {
      name: 'example.com/cleanup',
      finalize: (object) => void cleaned.push(object.metadata!.name!),
    });
    const ref = { namespace: 'ns', name: 'a' };
    const run = async () => {
      const object = await fake.get<Obj>(Widget, ref);
      const context = reconcileContext(ref);
      const request: ReconcileRequest<Obj> = {
        ref,
        key: context.key,
        object,
        signal: context.signal,
        attempt: 1,
        reconcileId: 'r',
        log: { info() {}, warn() {}, error() {}, debug() {} } as never,
        client: fake,
        cluster: context.cluster,
      };
      await reconcile(request);
    };
    await fake.create(widget('a'));
    await run();
    assert.deepEqual((await fake.get<Obj>(Widget, ref))!.metadata!.finalizers, ['example.com/cleanup']);
    assert.deepEqual(reconciled, ['a']);
    await fake.delete(Widget, ref);
    await run();
    assert.deepEqual(cleaned, ['a']);
    assert.equal(await fake.get(Widget, ref), undefined);
  });

  it('records events, and every call in actions', async () => {
    const fake = fakeKubeClient({ kinds: [Widget] });
    const created = await fake.create(widget('a'));
    await fake.get(Widget, { namespace: 'ns', name: 'a' });
    await fake.recordEvent(created, 'Warning', 'Broken', 'x'.repeat(2000));
    assert.deepEqual(
      fake.recordedEvents.map((e) => [e.type, e.reason, e.message.length, e.object.name, e.object.uid]),
      [['Warning', 'Broken', 1024, 'a', created.metadata!.uid]],
    );
    assert.deepEqual(
      fake.actions.map((a) => a.verb),
      ['create', 'get', 'event'],
    );
    assert.deepEqual(
      fake.writes.map((a) => a.verb),
      ['create', 'event'],
    );
  });

  it('fails the calls an interceptor throws for, until it is removed; retryOnConflict retries conflicts', async () => {
    const fake = fakeKubeClient({ kinds: [Widget], objects: [widget('a')] });
    let conflicts = 2;
    const remove = fake.intercept((action) => {
      if (action.verb === 'update' && conflicts-- > 0) {
        throw new KubeApiError(409, 'Conflict', 'injected', 'PUT', '/x');
      }
    });
    const ref = { namespace: 'ns', name: 'a' };
    const updated = await fake.retryOnConflict(
      async () => (await fake.get<Obj>(Widget, ref))!,
      (current) => fake.replace({ ...current, spec: { size: 7 } }),
    );
    assert.deepEqual(updated.spec, { size: 7 });
    assert.equal(fake.actions.filter((a) => a.verb === 'update').length, 3);
    remove();
    const failing = fake.intercept(() => {
      throw new KubeApiError(503, 'ServiceUnavailable', 'down', 'GET', '/x');
    });
    assert.equal((await apiError(fake.get(Widget, ref))).status, 503);
    failing();
    assert.ok(await fake.get(Widget, ref));
  });

  it('says which kind it does not know', async () => {
    const fake = fakeKubeClient();
    await assert.rejects(fake.create(widget('a')), /unknown kind Widget in example\.com\/v1: register its descriptor/);
  });

  it('treats a kind listed as without status subresource as one whole object', async () => {
    const fake = fakeKubeClient({ withoutStatusSubresource: [Widget] });
    const created = await fake.create(widget('a', { size: 1 }, { status: { phase: 'x' } }));
    assert.deepEqual(created.status, { phase: 'x' });
    assert.equal(created.metadata!.generation, undefined);
  });

  it('models Deployments with the status subresource', async () => {
    const fake = fakeKubeClient();
    const d = await fake.apply<Obj>({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd', namespace: 'ns' },
      spec: { replicas: 1, selector: { matchLabels: { a: 'b' } }, template: {} },
    });
    const withStatus = await fake.patchStatus(d, { replicas: 1 });
    assert.equal(withStatus.status?.replicas, 1);
    assert.equal((await fake.get(Deployment, { namespace: 'ns', name: 'd' }))!.metadata!.generation, 1);
  });
});
