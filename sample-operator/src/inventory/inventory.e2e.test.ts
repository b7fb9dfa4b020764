// End-to-end tests of the inventory controller: records in a store outside Kubernetes,
// polled, become ConfigMaps in a real API server, and go when the records go.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { OperatorModule } from '@nestor/operator';
import { TestEnvironment, waitFor } from '@nestor/testing';
import type { ConfigMapObject } from '../kube-types.js';
import { RECORD_LABEL } from './inventory.configmap.js';
import { InventoryModule } from './inventory.module.js';
import { RecordStore, type InventoryRecord } from './record-store.js';

let env: TestEnvironment;
before(async () => {
  env = await TestEnvironment.start();
});
after(() => env.stop());

const mug: InventoryRecord = { id: 'sku-1', name: 'mug', quantity: 3, warehouse: 'lisbon' };
const shirt: InventoryRecord = { id: 'sku-2', name: 't-shirt', quantity: 12, warehouse: 'berlin' };

async function startOperator(
  namespace: string,
  records: InventoryRecord[],
  store?: RecordStore,
): Promise<INestApplicationContext> {
  let builder = Test.createTestingModule({
    imports: [
      OperatorModule.forRoot({ kubeConfig: env.kubeConfig, namespace, metrics: { port: 0 }, health: { port: 0 } }),
      InventoryModule.forRoot({ namespace, pollIntervalMs: 100, records }),
    ],
  });
  if (store) builder = builder.overrideProvider(RecordStore).useValue(store);
  const moduleRef = await builder.compile();
  await moduleRef.init();
  return moduleRef;
}

/** The inventory ConfigMaps in a namespace, as { id: data }. */
async function configMaps(ns: string): Promise<Record<string, Record<string, string> | undefined>> {
  const list = await env.client.request<{ items: ConfigMapObject[] }>(
    'GET',
    `/api/v1/namespaces/${ns}/configmaps?labelSelector=${encodeURIComponent(RECORD_LABEL)}`,
  );
  return Object.fromEntries(list.items.map((cm) => [cm.metadata!.labels![RECORD_LABEL]!, cm.data]));
}

/** Waits until the ConfigMaps are exactly these records. */
function mirrored(ns: string, records: InventoryRecord[], what: string) {
  const wanted = Object.fromEntries(
    records.map((r) => [r.id, { name: r.name, quantity: String(r.quantity), warehouse: r.warehouse }]),
  );
  return waitFor(
    async () => {
      const actual = await configMaps(ns);
      assert.deepEqual(actual, wanted);
      return true;
    },
    { what },
  );
}

describe('inventory controller', () => {
  it('keeps one ConfigMap per record as the records are created, changed and removed', async () => {
    const ns = await env.createNamespace('inventory');
    const app = await startOperator(ns, [mug, shirt]);
    try {
      const store = app.get(RecordStore);
      await mirrored(ns, [mug, shirt], 'ConfigMaps for the initial records');

      const fewerMugs = { ...mug, quantity: 1 };
      const poster = { id: 'sku-3', name: 'poster', quantity: 40, warehouse: 'berlin' };
      store.put(fewerMugs);
      store.put(poster);
      await mirrored(ns, [fewerMugs, shirt, poster], 'a changed record and a new one');

      store.remove(shirt.id);
      await mirrored(ns, [fewerMugs, poster], 'the ConfigMap of the removed record to go');
    } finally {
      await app.close();
    }
  });

  it('recreates a ConfigMap deleted by hand, and deletes one whose record went while it was down', async () => {
    const ns = await env.createNamespace('inventory-drift');
    let app = await startOperator(ns, [mug, shirt]);
    await mirrored(ns, [mug, shirt], 'the initial ConfigMaps');
    await env.client.request('DELETE', `/api/v1/namespaces/${ns}/configmaps/inventory-${mug.id}`);
    await mirrored(ns, [mug, shirt], 'the deleted ConfigMap to come back');
    await app.close();

    // The operator restarts with a store that no longer has the shirt: no poll reports it
    // gone, but the ConfigMap watch hands its ConfigMap to the reconciler, which asks the store.
    app = await startOperator(ns, [mug]);
    try {
      await mirrored(ns, [mug], 'the stale ConfigMap to be deleted');
    } finally {
      await app.close();
    }
  });

  it('goes on polling after the store fails, and retries a record it could not read', async () => {
    class FlakyStore extends RecordStore {
      failedLists = 0;
      failedGets = 0;
      override async list(): Promise<InventoryRecord[]> {
        if (this.failedLists < 3) {
          this.failedLists++;
          throw new Error('inventory API: 503 Service Unavailable');
        }
        return super.list();
      }
      override async get(id: string): Promise<InventoryRecord | undefined> {
        if (this.failedGets < 2) {
          this.failedGets++;
          throw new Error('inventory API: connection reset');
        }
        return super.get(id);
      }
    }
    const ns = await env.createNamespace('inventory-flaky');
    const store = new FlakyStore([mug]);
    const app = await startOperator(ns, [], store); // overrideProvider(RecordStore).useValue(store)
    try {
      await mirrored(ns, [mug], 'the ConfigMap despite failed polls and reads');
      assert.equal(store.failedLists, 3);
      assert.equal(store.failedGets, 2);
    } finally {
      await app.close();
    }
  });
});
