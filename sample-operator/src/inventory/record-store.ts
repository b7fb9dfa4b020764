// A stand-in for a system outside Kubernetes: an inventory API the operator polls. Its
// records change behind the operator's back (put/remove stand for other users of the API).
import { Injectable } from '@nestjs/common';

export interface InventoryRecord {
  /** Stable ID; becomes part of a Kubernetes name, so a DNS label: `sku-1001`. */
  id: string;
  name: string;
  quantity: number;
  warehouse: string;
}

@Injectable()
export class RecordStore {
  private readonly records = new Map<string, InventoryRecord>();
  /** Calls to list(): what a real API would bill for. */
  polls = 0;

  constructor(initial: InventoryRecord[] = []) {
    for (const record of initial) this.put(record);
  }

  /** GET /records: every record, as a remote API returns copies. */
  async list(): Promise<InventoryRecord[]> {
    this.polls++;
    return [...this.records.values()].map((r) => ({ ...r }));
  }

  /** GET /records/:id */
  async get(id: string): Promise<InventoryRecord | undefined> {
    const record = this.records.get(id);
    return record && { ...record };
  }

  /** Someone else creates or edits a record. */
  put(record: InventoryRecord): void {
    this.records.set(record.id, { ...record });
  }

  /** Someone else deletes a record. */
  remove(id: string): boolean {
    return this.records.delete(id);
  }
}
