import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeApiError, type RequestOptions, type TransportResponse } from '@nestor/core';
import { migrateStorageVersion } from './storage-version-migration.js';
import { storageVersionHash } from './storage-version-served.js';
import type { CustomResourceDefinitionObject } from './stored-versions.js';

const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com';
const LIST_PATH = '/apis/example.com/v1/widgets';

/**
 * An API server for one kind, in memory: each object remembers the version it is stored
 * in, a PATCH stores it in the storage version (and writes nothing when it is there
 * already), LISTs are paged, and the CRD's status takes the trim. Faults are scripted.
 */
class FakeServer {
  crd: CustomResourceDefinitionObject;
  readonly objects = new Map<string, { stored: string; resourceVersion: number }>();
  readonly patched: string[] = [];
  /** Answers to give, by object name, before the PATCH is applied (409, 404, 422...). */
  readonly faults = new Map<string, number[]>();
  /** Called when a list page is served (a test changes the CRD or deletes objects there). */
  onPage?: (page: number) => void;
  /** The version discovery says the kind is stored as, by call (then the CRD's storage version). */
  readonly discovered: string[] = [];
  private revision = 100;
  private pages = 0;

  constructor(count: number, storedVersions = ['v1beta1', 'v1']) {
    this.crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com', resourceVersion: '1' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', kind: 'Widget' },
        versions: [
          { name: 'v1beta1', served: true, storage: false },
          { name: 'v1', served: true, storage: true },
        ],
      },
      status: { storedVersions, acceptedNames: { plural: 'widgets', kind: 'Widget' } },
    };
    for (let i = 0; i < count; i++)
      this.objects.set(`w-${String(i).padStart(3, '0')}`, { stored: 'v1beta1', resourceVersion: i + 1 });
  }

  get storage(): string {
    return this.crd.spec.versions.find((v) => v.storage)!.name;
  }

  async json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const { status, body } = await this.request(method, path, options);
    if (status >= 400) throw KubeApiError.fromResponse({ method, path }, status, body);
    return JSON.parse(body.toString()) as T;
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<TransportResponse> {
    await Promise.resolve();
    const answer = (status: number, value: unknown) => ({
      status,
      headers: {},
      body: Buffer.from(JSON.stringify(value)),
    });
    if (method === 'GET' && path === CRD_PATH) return answer(200, this.crd);
    if (method === 'PATCH' && path === `${CRD_PATH}/status`) {
      const patch = options.body as { metadata: { resourceVersion?: string }; status: { storedVersions: string[] } };
      if (patch.metadata.resourceVersion !== this.crd.metadata!.resourceVersion)
        return answer(409, { kind: 'Status', code: 409, reason: 'Conflict', message: 'the object has been modified' });
      this.changeCrd((crd) => (crd.status!.storedVersions = patch.status.storedVersions));
      return answer(200, this.crd);
    }
    if (method === 'GET' && path === LIST_PATH) return answer(200, this.page(options));
    if (method === 'GET' && path === '/apis/example.com/v1') {
      const stored = this.discovered.shift() ?? this.storage;
      return answer(200, {
        resources: [{ name: 'widgets', storageVersionHash: storageVersionHash('example.com', stored, 'Widget') }],
      });
    }
    const name = /\/namespaces\/ns\/widgets\/(.+)$/.exec(path)?.[1];
    if (method === 'PATCH' && name) {
      this.patched.push(name);
      const fault = this.faults.get(name)?.shift();
      if (fault)
        return answer(fault, { kind: 'Status', code: fault, reason: 'Scripted', message: `scripted ${fault}` });
      const object = this.objects.get(name);
      if (!object) return answer(404, { kind: 'Status', code: 404, reason: 'NotFound', message: 'not found' });
      if (object.stored !== this.storage)
        Object.assign(object, { stored: this.storage, resourceVersion: ++this.revision });
      return answer(200, { metadata: { name, namespace: 'ns', resourceVersion: String(object.resourceVersion) } });
    }
    return answer(404, { kind: 'Status', code: 404, reason: 'NotFound', message: `no ${method} ${path}` });
  }

  changeCrd(change: (crd: CustomResourceDefinitionObject) => void): void {
    change(this.crd);
    this.crd.metadata!.resourceVersion = String(Number(this.crd.metadata!.resourceVersion) + 1);
  }

  private page(options: RequestOptions) {
    const names = [...this.objects.keys()].sort();
    const from = options.query?.continue ? names.indexOf(String(options.query.continue)) : 0;
    const limit = Number(options.query?.limit);
    const items = names.slice(from, from + limit).map((name) => ({
      metadata: { name, namespace: 'ns', resourceVersion: String(this.objects.get(name)!.resourceVersion) },
    }));
    const next = names[from + limit];
    this.onPage?.(this.pages++); // after the page is read: what the hook deletes was listed
    return {
      metadata: {
        resourceVersion: String(this.revision),
        ...(next ? { continue: next, remainingItemCount: names.length - from - limit } : {}),
      },
      items,
    };
  }
}

const fast = { writesPerSecond: Infinity, pageSize: 10, wait: () => Promise.resolve() };

describe('migrateStorageVersion', () => {
  it('rewrites every object in the storage version, page by page, then trims storedVersions to it', async () => {
    const server = new FakeServer(25);
    const progress: Array<number | undefined> = [];
    const result = await migrateStorageVersion(server, 'widgets.example.com', {
      ...fast,
      onProgress: (p) => progress.push(p.remaining),
    });
    assert.equal(result.outcome, 'migrated');
    assert.deepEqual([result.rewritten, result.current, result.gone, result.failed], [25, 0, 0, 0]);
    assert.deepEqual(result.storedVersions, ['v1']);
    assert.deepEqual(server.crd.status?.storedVersions, ['v1']);
    assert.ok([...server.objects.values()].every((o) => o.stored === 'v1'));
    assert.deepEqual(progress, [15, 5, undefined], 'the objects left, after each page, as the server counts them');
  });

  it('waits until the API server stores the kind as the CRD says (discovery), then rewrites', async () => {
    const server = new FakeServer(5);
    server.discovered.push('v1beta1', 'v1beta1');
    const waits: number[] = [];
    const result = await migrateStorageVersion(server, 'widgets.example.com', {
      ...fast,
      wait: (ms) => (waits.push(ms), Promise.resolve()),
    });
    assert.deepEqual(waits, [1000, 1000], 'asked again each second');
    assert.deepEqual([result.outcome, result.rewritten], ['migrated', 5]);
  });

  it('gives up, writing nothing, when the API server never stores the kind as the CRD says', async () => {
    const server = new FakeServer(5);
    server.discovered.push(...Array<string>(100).fill('v1beta1'));
    await assert.rejects(
      migrateStorageVersion(server, 'widgets.example.com', { ...fast, storedAsTimeoutMs: 0 }),
      /does not store widgets\.example\.com as v1 yet/,
    );
    assert.equal(server.patched.length, 0);
  });

  it('does nothing when storedVersions lists the storage version alone', async () => {
    const server = new FakeServer(5, ['v1']);
    const result = await migrateStorageVersion(server, 'widgets.example.com', fast);
    assert.deepEqual([result.outcome, result.storedVersions, server.patched.length], ['current', ['v1'], 0]);
  });

  it('counts objects stored in the storage version already as current (a run started again)', async () => {
    const server = new FakeServer(10);
    for (const [i, object] of [...server.objects.values()].entries()) if (i < 6) object.stored = 'v1';
    const result = await migrateStorageVersion(server, 'widgets.example.com', fast);
    assert.deepEqual([result.outcome, result.rewritten, result.current], ['migrated', 4, 6]);
  });

  it('retries conflicts and failing servers, and skips objects deleted since they were listed', async () => {
    const server = new FakeServer(10);
    server.faults.set('w-002', [409, 409]);
    server.faults.set('w-004', [503]);
    server.onPage = (page) => {
      if (page === 0) server.objects.delete('w-007');
    };
    const result = await migrateStorageVersion(server, 'widgets.example.com', fast);
    assert.deepEqual([result.outcome, result.rewritten, result.gone, result.failed], ['migrated', 9, 1, 0]);
    assert.equal(server.patched.filter((name) => name === 'w-002').length, 3, 'two conflicts, then the write');
    assert.equal(server.objects.get('w-002')?.stored, 'v1');
  });

  it('keeps storedVersions when an object cannot be rewritten, naming it', async () => {
    const server = new FakeServer(10);
    server.faults.set('w-003', [422]);
    const result = await migrateStorageVersion(server, 'widgets.example.com', fast);
    assert.deepEqual([result.outcome, result.rewritten, result.failed], ['incomplete', 9, 1]);
    assert.deepEqual(server.crd.status?.storedVersions, ['v1beta1', 'v1']);
    assert.equal(result.failures[0]?.object, 'ns/w-003');
    assert.match(result.failures[0]!.reason, /422.*scripted 422/);
  });

  it('does not trim when the storage version changed during the run', async () => {
    const server = new FakeServer(20);
    server.onPage = (page) => {
      if (page !== 1) return;
      server.changeCrd((crd) => {
        crd.spec.versions = [...crd.spec.versions, { name: 'v2', served: true, storage: true }];
        crd.spec.versions.filter((v) => v.name !== 'v2').forEach((v) => (v.storage = false));
        crd.status!.storedVersions = [...crd.status!.storedVersions!, 'v2'];
      });
    };
    const result = await migrateStorageVersion(server, 'widgets.example.com', fast);
    assert.equal(result.outcome, 'superseded');
    assert.match(result.detail!, /storage version changed from v1 to v2/);
    assert.deepEqual(server.crd.status?.storedVersions, ['v1beta1', 'v1', 'v2']);
  });

  it('reads the CRD again when its status changed before the trim (409)', async () => {
    const server = new FakeServer(3);
    const json = server.json.bind(server);
    let trims = 0;
    server.json = (async (method: string, path: string, options?: RequestOptions) => {
      if (method === 'PATCH' && path.endsWith('/status') && trims++ === 0)
        server.changeCrd((crd) => (crd.metadata!.labels = { touched: 'yes' }));
      return json(method, path, options);
    }) as typeof server.json;
    const result = await migrateStorageVersion(server, 'widgets.example.com', fast);
    assert.deepEqual([result.outcome, trims], ['migrated', 2]);
  });

  it('says which CRD is missing, and how to name one', async () => {
    const server = new FakeServer(1);
    await assert.rejects(
      migrateStorageVersion(server, 'gadgets.example.com', fast),
      /there is no CRD named gadgets\.example\.com.*<plural>\.<group>/,
    );
  });

  it('stops when its signal aborts, storedVersions untouched', async () => {
    const server = new FakeServer(30);
    const abort = new AbortController();
    server.onPage = (page) => {
      if (page === 1) abort.abort(new Error('stop'));
    };
    await assert.rejects(
      migrateStorageVersion(server, 'widgets.example.com', { ...fast, signal: abort.signal }),
      /stop/,
    );
    assert.deepEqual(server.crd.status?.storedVersions, ['v1beta1', 'v1']);
  });
});
