// The ConfigMap a record wants: a pure function, server-side applied by the controller.
import type { ConfigMapObject } from '../kube-types.js';
import type { InventoryRecord } from './record-store.js';

/** The label that ties a ConfigMap to its record (and selects what the controller watches). */
export const RECORD_LABEL = 'inventory.example.com/record';

export const configMapName = (id: string) => `inventory-${id}`;

export function configMapFor(record: InventoryRecord, namespace: string): ConfigMapObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: configMapName(record.id),
      namespace,
      labels: { [RECORD_LABEL]: record.id, 'app.kubernetes.io/managed-by': 'sample-operator' },
    },
    data: { name: record.name, quantity: String(record.quantity), warehouse: record.warehouse },
  };
}
