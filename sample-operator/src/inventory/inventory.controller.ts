// A controller fed from outside Kubernetes: it polls an inventory API and keeps one
// ConfigMap per record. The poller only says *which* records may have changed; the
// reconciler asks the store for the record's current state and applies or deletes, so the
// queue's guarantees (dedup, one run per key at a time, retry with backoff) hold as for
// any Kubernetes kind.
import { Inject, Logger } from '@nestjs/common';
import type { Observable } from 'rxjs';
import {
  ConfigMap,
  Controller,
  Reconcile,
  Source,
  TerminalError,
  Watches,
  poll,
  type ObjectRef,
  type ReconcileContext,
} from '@nestor/operator';
import type { ConfigMapObject } from '../kube-types.js';
import { RECORD_LABEL, configMapFor, configMapName } from './inventory.configmap.js';
import { INVENTORY_OPTIONS, type InventoryOptions } from './inventory.options.js';
import { RecordStore, type InventoryRecord } from './record-store.js';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,50}[a-z0-9])?$/;

@Controller({ writes: [ConfigMap] })
export class InventoryController {
  private readonly logger = new Logger(InventoryController.name);

  constructor(
    private readonly store: RecordStore,
    @Inject(INVENTORY_OPTIONS) private readonly options: InventoryOptions,
  ) {}

  /**
   * Lists the store every pollIntervalMs and emits the records that appeared, changed or
   * went since the last list. A failed list is retried with backoff; polling goes on.
   */
  @Source()
  changedRecords(): Observable<ObjectRef[]> {
    return poll(() => this.store.list(), {
      intervalMs: this.options.pollIntervalMs,
      key: (record) => record.id,
      namespace: this.options.namespace,
      onError: (error, retryInMs) =>
        this.logger.warn(`polling the inventory failed, trying again in ${retryInMs} ms: ${error.message}`),
    });
  }

  /** A ConfigMap edited or deleted by hand, or left from a record deleted while we were down. */
  @Watches(ConfigMap, { labelSelector: RECORD_LABEL })
  recordOf(configMap: ConfigMapObject): ObjectRef | undefined {
    const id = configMap.metadata?.labels?.[RECORD_LABEL];
    const namespace = configMap.metadata?.namespace;
    return id && namespace === this.options.namespace ? { namespace, name: id } : undefined;
  }

  /** Gets the record ID (not a record): the store says what it is now. */
  @Reconcile()
  async reconcile(request: ObjectRef, ctx: ReconcileContext): Promise<void> {
    const namespace = request.namespace ?? this.options.namespace;
    const record: InventoryRecord | undefined = await this.store.get(request.name); // a throw retries with backoff
    if (!record) {
      if (await ctx.client.delete(ConfigMap, { namespace, name: configMapName(request.name) }))
        ctx.log.log(`record ${request.name} is gone: deleted its ConfigMap`);
      return;
    }
    if (!DNS_LABEL.test(record.id))
      throw new TerminalError(`record ID "${record.id}" cannot name a ConfigMap: IDs must be DNS labels`);
    await ctx.client.apply(configMapFor(record, namespace));
  }
}
