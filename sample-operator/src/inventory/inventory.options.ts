import type { InventoryRecord } from './record-store.js';

export interface InventoryOptions {
  /** Where the ConfigMaps go. */
  namespace: string;
  /** How often the record store is polled. */
  pollIntervalMs: number;
  /** The store's records at start-up (the in-memory stand-in has no other data). */
  records?: InventoryRecord[];
}

export const INVENTORY_OPTIONS = Symbol('INVENTORY_OPTIONS');
