import type { Subscription } from 'rxjs';
import {
  listPages,
  METADATA_LIST_ACCEPT,
  resourceName,
  resourcePath,
  type KubeObject,
  type ResourceDescriptor,
  type RuntimeLogger,
  silentLogger,
  sleep,
  type Transport,
} from '@nestor/core';
import type { InformerCache, InformerHandle } from '../runtime/cache/informer-cache.js';
import type { ShardingMetrics } from '../runtime/controller/sharding-hooks.js';
import { planAssignments, type AssignmentAction, type AssignmentInput } from './assignment-plan.js';
import { HashRing } from './hash-ring.js';
import { patchLabels, type LabelWrite } from './label-writes.js';
import type { ShardMembers } from './shard-members.js';
import { objectId, shardKeyOf } from './shard-key.js';
import { DRAIN_REQUESTED_AT_ANNOTATION, unassignedSelector, type ShardLabels } from './shard-labels.js';
import type { ObjectSelector } from '../client/object-selector.js';

/** How long after a pass that left drains under way to an outdated target the next one starts. */
const WAITING_PASS_MS = 2_000;

/** What one of the assigner's label writes did. */
type WriteOutcome = LabelWrite | 'failed';

/** A kind whose objects are spread over the shards: those its controller's selector picks, nothing else. */
export interface ShardedKind extends ObjectSelector {
  resource: ResourceDescriptor;
  /**
   * Set for an owned kind: only objects whose controller owner is of this kind are
   * sharded; they follow their owner's shard and are never drained (see planAssignments).
   */
  owner?: ResourceDescriptor;
}

/** What the assigner did so far (for logs, metrics and tests). */
export interface AssignerStats {
  /** Objects given a shard: new ones, and those of shards that died. */
  assigned: number;
  /** Drain requests written: objects asked to move from a live shard. */
  drained: number;
  /** Writes refused because the object changed meanwhile (decided again from the newer object). */
  conflicts: number;
  /** Complete rebalance passes. */
  passes: number;
}

export interface ShardAssignerOptions {
  transport: Pick<Transport, 'json'>;
  informers: InformerCache;
  labels: ShardLabels;
  /** Makes the ring's membership view for one run (one per time this replica leads). */
  members: () => ShardMembers;
  tokensPerShard?: number;
  /** Label writes in flight at once (default 20). */
  concurrency?: number;
  /** A full rebalance pass this often, besides those on membership changes (default 5 min). */
  resyncMs?: number;
  /** How long membership must stay still before a rebalance pass (default 1 s): shards starting together move nothing twice. */
  settleMs?: number;
  metrics?: Pick<ShardingMetrics, 'moved' | 'rebalanced'>;
  logger?: RuntimeLogger;
}

interface Candidate extends AssignmentInput {
  object: KubeObject;
  kind: ShardedKind;
}

/**
 * The elected leader's part of sharding. It caches only the objects no shard owns (an
 * informer per sharded kind selecting `!shard.nestor.dev/<ring>`, metadata only: normally
 * empty) and gives each new one its ring shard at once; when the available shards change,
 * and every `resyncMs`, it pages through every sharded object's metadata (a consistent
 * LIST in pages of 500) and plans the moves: objects of dead shards are
 * reassigned, objects whose live shard the ring no longer names get a drain request,
 * which their shard acknowledges by relabelling them (see ShardGuard). Every write
 * is guarded by the resourceVersion it was decided on.
 */
export class ShardAssigner {
  readonly stats: AssignerStats = { assigned: 0, drained: 0, conflicts: 0, passes: 0 };
  private readonly kinds: ShardedKind[] = [];
  /** Resources some sharded controller reconciles (its primary kind), by resource name. */
  private readonly primaries = new Set<string>();
  private readonly log: RuntimeLogger;
  private ring = new HashRing([]);
  /** Unassigned objects waiting for their write, by kind and key: the newest object wins. */
  private readonly pending = new Map<string, { kind: ShardedKind; object: KubeObject }>();
  private writers = 0;
  private wake?: () => void;
  private passWanted = false;
  /** Throws once this replica may no longer lead (the leader Lease's fence); set per run. */
  private assertLeading: () => void = () => {};

  constructor(private readonly options: ShardAssignerOptions) {
    this.log = options.logger ?? silentLogger;
  }

  addKind(kind: ShardedKind): void {
    const id = kindId(kind);
    if (!this.kinds.some((k) => kindId(k) === id)) this.kinds.push({ ...kind });
    if (!kind.owner) this.primaries.add(resourceName(kind.resource));
  }

  /**
   * Assigns until `signal` aborts (this replica no longer leads). Never rejects. Each write
   * first calls `assertLeading`, so a leader that cannot be sure of its Lease writes nothing.
   */
  async run(signal: AbortSignal, assertLeading?: () => void): Promise<void> {
    const { informers, labels } = this.options;
    const members = this.options.members();
    this.assertLeading = assertLeading ?? (() => {});
    members.assertLeading = this.assertLeading;
    const wakeOnAbort = () => this.wake?.();
    signal.addEventListener('abort', wakeOnAbort, { once: true });
    const handles: InformerHandle[] = [];
    const subscriptions: Subscription[] = [];
    const resync = setInterval(() => this.requestPass(), this.options.resyncMs ?? 5 * 60_000);
    try {
      members.start();
      await members.whenSynced(signal);
      subscriptions.push(
        members.available$.subscribe((shards) => {
          this.ring = new HashRing(shards, {
            ...(this.options.tokensPerShard ? { tokensPerShard: this.options.tokensPerShard } : {}),
          });
          this.log.info(`ring ${labels.ring}: ${shards.length} shard(s) available: ${shards.join(', ') || 'none'}`);
          this.requestPass();
          this.drainPending();
        }),
      );
      for (const kind of this.kinds) {
        const handle = informers.acquire(kind.resource, {
          ...(kind.namespace ? { namespace: kind.namespace } : {}),
          labelSelector: [unassignedSelector(labels.ring), kind.labelSelector].filter(Boolean).join(','),
          ...(kind.fieldSelector ? { fieldSelector: kind.fieldSelector } : {}),
          metadataOnly: true,
        });
        handles.push(handle);
        subscriptions.push(
          handle.informer.events$.subscribe((event) => {
            if (event.type !== 'deleted') this.queueAssign(kind, event.object);
          }),
        );
        for (const object of handle.informer.list()) this.queueAssign(kind, object);
      }
      while (!signal.aborted) {
        if (!this.passWanted) {
          await new Promise<void>((resolve) => (this.wake = resolve));
          this.wake = undefined;
          continue;
        }
        // Shards starting or stopping together settle first, so no object moves twice.
        await sleep(this.options.settleMs ?? 1_000, signal).catch(() => {});
        if (signal.aborted) break;
        this.passWanted = false;
        await this.pass(signal, members).catch((error: Error) => {
          if (signal.aborted) return;
          this.log.warn(`ring ${labels.ring}: rebalance pass failed, trying again: ${error.message}`);
          this.passWanted = true;
          return sleep(2_000, signal).catch(() => {});
        });
      }
    } catch (error) {
      if (!signal.aborted) this.log.error(`ring ${labels.ring}: the assigner stopped: ${(error as Error).message}`);
    } finally {
      signal.removeEventListener('abort', wakeOnAbort);
      clearInterval(resync);
      for (const subscription of subscriptions) subscription.unsubscribe();
      for (const handle of handles) handle.release();
      members.stop();
      this.pending.clear();
    }
  }

  private requestPass(): void {
    this.passWanted = true;
    this.wake?.();
  }

  /** One walk over every sharded object: reassign the dead shards' objects, drain the moved ones. */
  private async pass(signal: AbortSignal, members: ShardMembers): Promise<void> {
    const ring = this.ring;
    // Leases taken from dead shards before this pass: released once it has moved their objects.
    const taken = members.taken();
    if (ring.shards.length === 0) {
      // No shard to move anything to: holding the taken Leases protects nothing, and a shard
      // that comes back must be able to take its Lease (and its objects, still labelled for it).
      if (taken.size > 0) await members.release(taken);
      return;
    }
    const started = performance.now();
    let actions = 0;
    let retry = false;
    /** Objects draining to a shard the ring no longer names: another move once acknowledged. */
    let waiting = 0;
    /** Taken shards with an object whose move did not go through in this pass. */
    const unsettled = new Set<string>();
    // Children first: those of a dead shard then reach their new shard before their owner
    // does, so it reconciles the owner with them in its cache.
    const kinds = [...this.kinds.filter((k) => k.owner), ...this.kinds.filter((k) => !k.owner)];
    for (const kind of kinds) {
      const pages = listPages<KubeObject>(this.options.transport, resourcePath(kind.resource, kind.namespace), {
        // No resourceVersion: the watch cache answers resourceVersion 0 in one page whatever
        // the limit (10,000 objects: +100 MiB of RSS on the leader, bench/sharding.mjs),
        // while a consistent LIST is paged, so a pass holds one page of metadata at a time.
        query: {
          ...(kind.labelSelector ? { labelSelector: kind.labelSelector } : {}),
          ...(kind.fieldSelector ? { fieldSelector: kind.fieldSelector } : {}),
        },
        accept: METADATA_LIST_ACCEPT,
        pageSize: 500,
        signal,
      });
      for await (const page of pages) {
        const candidates = page.items.flatMap((object) => this.candidate(kind, object));
        const plan = planAssignments(candidates, ring, { maxMoves: Math.max(1, candidates.length) });
        waiting += plan.waiting;
        for (const { action, outcome } of await this.apply(plan.actions, ring, signal)) {
          actions++;
          if (outcome === 'written' || outcome === 'gone') continue;
          retry = true;
          for (const shard of [action.object.shard, action.object.drain])
            if (shard !== undefined && taken.has(shard)) unsettled.add(shard);
        }
        // The shards changed under the pass, or this replica stopped leading: what is left was
        // planned for a ring that is gone (a shard declared dead may be back). The pass the
        // change asked for starts over; nothing is released.
        if (signal.aborted || this.ring !== ring) return;
      }
    }
    // Their shards may take their Leases back now: none of their objects is labelled for them.
    const settled = new Map([...taken].filter(([shard]) => !unsettled.has(shard)));
    if (settled.size > 0) await members.release(settled);
    this.stats.passes++;
    this.options.metrics?.rebalanced((performance.now() - started) / 1000);
    if (actions > 0) this.log.info(`ring ${this.options.labels.ring}: rebalance pass made ${actions} move(s)`);
    // Objects that changed under a write, or whose write failed, were not moved: another
    // pass decides from their new version.
    if (retry) this.passWanted = true;
    // Those need another pass once their old shard has handed them over (children and all);
    // a while later, so a drain that takes long costs a pass every few seconds, not a loop.
    else if (waiting > 0) this.passAfter(WAITING_PASS_MS, signal);
  }

  private passAfter(ms: number, signal: AbortSignal): void {
    void sleep(ms, signal).then(
      () => this.requestPass(),
      () => {},
    );
  }

  private candidate(kind: ShardedKind, object: KubeObject): Candidate[] {
    const labels = object.metadata?.labels ?? {};
    const shard = labels[this.options.labels.shard];
    const drain = labels[this.options.labels.drain];
    if (!isSharded(kind, object)) return [];
    let key: string;
    try {
      key = shardKeyOf(kind.resource, object);
    } catch {
      return [];
    }
    return [
      {
        key,
        object,
        kind,
        // A child moves with its owner, since the owner's reconcile manages it: inside the
        // owner's hand-over, or at once when unassigned or on a dead shard. A child that
        // some controller also reconciles as its primary kind is drained like any primary,
        // or that reconcile could run on two shards at once.
        controlled: kind.owner !== undefined && !this.primaries.has(resourceName(kind.resource)),
        ...(shard !== undefined ? { shard } : {}),
        ...(drain !== undefined ? { drain } : {}),
      },
    ];
  }

  /**
   * Writes the actions, `concurrency` at a time, while `ring` is current and this replica
   * leads; returns what each write that was tried did.
   */
  private async apply(
    actions: AssignmentAction<Candidate>[],
    ring: HashRing,
    signal: AbortSignal,
  ): Promise<Array<{ action: AssignmentAction<Candidate>; outcome: WriteOutcome }>> {
    const limit = this.options.concurrency ?? 20;
    const done: Array<{ action: AssignmentAction<Candidate>; outcome: WriteOutcome }> = [];
    let next = 0;
    const worker = async () => {
      while (next < actions.length && !signal.aborted && this.ring === ring) {
        const action = actions[next++]!;
        done.push({
          action,
          outcome: await this.write(action.object.kind, action.object.object, action.type, action.shard),
        });
      }
    };
    await Promise.all(Array.from({ length: Math.min(limit, actions.length) }, worker));
    return done;
  }

  private async write(
    kind: ShardedKind,
    object: KubeObject,
    type: 'assign' | 'drain',
    shard: string,
  ): Promise<WriteOutcome> {
    const { labels, transport } = this.options;
    try {
      this.assertLeading();
      const outcome = await patchLabels(
        transport,
        kind.resource,
        object,
        type === 'assign' ? { [labels.shard]: shard, [labels.drain]: null } : { [labels.drain]: shard },
        type === 'drain'
          ? { [DRAIN_REQUESTED_AT_ANNOTATION]: new Date().toISOString() }
          : { [DRAIN_REQUESTED_AT_ANNOTATION]: null },
      );
      if (outcome === 'conflict') this.stats.conflicts++;
      else if (outcome === 'written') {
        if (type === 'assign') this.stats.assigned++;
        else this.stats.drained++;
        this.options.metrics?.moved(type);
      }
      return outcome;
    } catch (error) {
      this.log.warn(
        `ring ${labels.ring}: could not ${type} ${resourceName(kind.resource)} ${object.metadata?.namespace ?? ''}/${object.metadata?.name}: ${(error as Error).message}`,
      );
      // Not a conflict: nothing about the object will ask again (a new object's one watch
      // event is spent), so a later pass, paced by the loop, decides it again.
      this.requestPass();
      return 'failed';
    }
  }

  /** A new unassigned object: assigned by a few background writers, the newest version of each. */
  private queueAssign(kind: ShardedKind, object: KubeObject): void {
    if (!isSharded(kind, object)) return;
    this.pending.set(objectId(kind.resource, object), { kind, object });
    this.drainPending();
  }

  private drainPending(): void {
    const limit = this.options.concurrency ?? 20;
    while (this.writers < limit && this.pending.size > 0 && this.ring.shards.length > 0) {
      this.writers++;
      void this.assignLoop().finally(() => this.writers--);
    }
  }

  private async assignLoop(): Promise<void> {
    for (;;) {
      const next = this.pending.entries().next();
      if (next.done || this.ring.shards.length === 0) return;
      const [id, { kind, object }] = next.value;
      this.pending.delete(id);
      const shard = this.ring.shardFor(shardKeyOf(kind.resource, object));
      if (shard) await this.write(kind, object, 'assign', shard);
    }
  }
}

/** One entry per kind, scope and selectors. */
function kindId(kind: ShardedKind): string {
  const { resource, owner, namespace = '', labelSelector = '', fieldSelector = '' } = kind;
  return [resourceName(resource), owner ? resourceName(owner) : '', namespace, labelSelector, fieldSelector].join('\n');
}

/** An owned kind's object is sharded when its controller owner is of the sharded kind (it then follows it). */
function isSharded(kind: ShardedKind, object: KubeObject): boolean {
  if (!kind.owner) return true;
  const owner = object.metadata?.ownerReferences?.find((ref) => ref.controller);
  if (!owner || owner.kind !== kind.owner.kind) return false;
  const slash = owner.apiVersion.indexOf('/');
  return (slash < 0 ? '' : owner.apiVersion.slice(0, slash)) === kind.owner.group;
}
