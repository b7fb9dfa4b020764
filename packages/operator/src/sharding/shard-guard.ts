import {
  KubeApiError,
  resourceName,
  resourcePath,
  silentLogger,
  type KubeObject,
  type ResourceDescriptor,
  type RuntimeLogger,
  type Transport,
} from '@nestor/core';
import type { ObjectTimer } from '../runtime/controller/object-timers.js';
import type { ReconcileRequest, Reconciler } from '../runtime/controller/reconciler.js';
import type { ChildrenOf, ShardedChild } from '../runtime/controller/sharding-hooks.js';
import { patchLabels, type LabelWrite } from './label-writes.js';
import { objectId } from './shard-key.js';
import { DRAIN_REQUESTED_AT_ANNOTATION, isLabelToken, type ShardLabels } from './shard-labels.js';

export interface ShardGuardOptions {
  transport: Pick<Transport, 'json'>;
  labels: ShardLabels;
  shardId: string;
  /** Throws unless this shard surely still holds its Lease (checked before the hand-over write). */
  assertWritable(): void;
  /** Counts the hand-overs, with the seconds since the drain was requested when known. */
  handedOver?(waitedSeconds?: number): void;
  /** How long a hand-over waits before looking again while another run of the object goes on (default 100 ms). */
  recheckMs?: number;
  /** Objects handed over, and objects confirmed after a lost Lease, that are remembered (default 10,000 of each). */
  rememberHandedOver?: number;
  /** Children relabelled at once in one hand-over (default 8). */
  childConcurrency?: number;
  logger?: RuntimeLogger;
}

/**
 * What keeps one shard's runs of an object apart from another shard's: every sharded
 * controller's reconciler and every `@Timer` of it go through here.
 *
 * - An object with a drain request is handed over, not reconciled: the relabel to the
 *   target shard runs as a run of the object's key (it cannot overlap that controller's
 *   reconcile of it), and it waits while any other run of the object on this shard goes
 *   on (another controller of the same kind, a timer). The target sees the object only
 *   once the write carries its label.
 * - An object whose label names another shard (a late requeue after a move) is left alone.
 * - No run starts unless the shard surely holds its Lease (a process thawed after a pause
 *   would otherwise start what its queue held before it notices the Lease is lost).
 * - An object this shard handed over is not run again from a cached copy that predates the
 *   hand-over (an informer with other selectors can lag behind the one that saw the drain):
 *   its runs first read the object from the API server, and go on only if it is this
 *   shard's again.
 * - After the shard lost its Lease (`suspect()`), the leader may have declared it dead and
 *   moved its objects while its caches could not see it. Each object's first run after
 *   that reads the object from the API server. Once confirmed, the cache is trusted again
 *   for that object: it can leave a live shard only through this shard's own hand-over.
 * - An object's children move inside its hand-over, before it: relabelled to the target,
 *   each write guarded by the child's resourceVersion, then the object, so the target's
 *   child informers get them from writes older than the one that shows it the object. A child
 *   this shard wrote just before the hand-over, which its cache showed only after it,
 *   follows its owner when it shows up (`childSeen`).
 * @internal
 */
export class ShardGuard {
  /** Runs of each object going on now on this shard, by object id. */
  private readonly running = new Map<string, number>();
  /** Objects whose hand-over write is in flight: no run of them starts meanwhile. */
  private readonly handing = new Set<string>();
  /** Objects handed over, by object id, oldest first (a Map keeps insertion order): the shard each went to (null: unassigned). */
  private readonly handedOver = new Map<string, string | null>();
  /** Children this shard wrote that its cache does not show yet, by object id, oldest first. */
  private readonly written = new Map<string, true>();
  /** Stray children whose relabel is in flight, by object id. */
  private readonly following = new Set<string>();
  private readonly log: RuntimeLogger;
  /** The cached children of an owner (the manager's owned informers); none until set. */
  children: ChildrenOf = () => [];
  /** Set once the shard lost its Lease: objects confirmed with the API server since. */
  private confirmed?: Map<string, true>;

  constructor(private readonly options: ShardGuardOptions) {
    this.log = options.logger ?? silentLogger;
  }

  /** The shard lost its Lease: confirm each object with the API server before its next run. */
  suspect(): void {
    this.confirmed = new Map();
  }

  /** The runs of `object` going on now (for tests and the hand-over). */
  runningOf(resource: ResourceDescriptor, object: KubeObject): number {
    return this.running.get(objectId(resource, object)) ?? 0;
  }

  /** Wraps a sharded controller's reconciler. */
  reconciler<T extends KubeObject>(resource: ResourceDescriptor<T>, reconcile: Reconciler<T>): Reconciler<T> {
    return async (request) => {
      const object = request.object;
      if (!object) return reconcile(request);
      const target = object.metadata?.labels?.[this.options.labels.drain];
      if (target !== undefined) return this.handOver(resource, object, target, request);
      // A shard thawed after a pause runs what its queue held before it notices the lost Lease:
      // a run starts only while the Lease is surely held, else its key comes back later.
      if (!this.leaseHeld()) return { requeueAfter: 1_000 }; // by then renewed, or the controllers stand by
      const id = objectId(resource, object);
      if (this.handing.has(id)) return { requeueAfter: this.options.recheckMs ?? 100 };
      // Counted from here, before any await, so a hand-over never sees it as not running.
      return this.tracked(id, async () => ((await this.owns(id, resource, object)) ? reconcile(request) : undefined));
    };
  }

  /** Wraps a sharded controller's timer: it runs only on this shard's objects, never during a hand-over. */
  timer<T extends KubeObject>(resource: ResourceDescriptor<T>, timer: ObjectTimer<T>): ObjectTimer<T> {
    return {
      ...timer,
      run: async (request) => {
        const object = request.object;
        if (!object || object.metadata?.labels?.[this.options.labels.drain] !== undefined) return;
        const id = objectId(resource, object);
        if (!this.leaseHeld() || this.handing.has(id)) return;
        await this.tracked(id, async () => {
          if (await this.owns(id, resource, object)) await timer.run(request);
        });
      },
    };
  }

  private leaseHeld(): boolean {
    try {
      this.options.assertWritable();
      return true;
    } catch {
      return false;
    }
  }

  /** Whether this shard may run `object`: labelled with its shard, and not a copy from before a hand-over. */
  private async owns(id: string, resource: ResourceDescriptor, object: KubeObject): Promise<boolean> {
    const { labels, shardId } = this.options;
    if (object.metadata?.labels?.[labels.shard] !== shardId) return false;
    const unconfirmed = this.confirmed !== undefined && !this.confirmed.has(id);
    if (!this.handedOver.has(id) && !unconfirmed) return true;
    // Handed over since, or the Lease was lost since: the cache that gave this copy may not
    // know what happened meanwhile. Ask the API server.
    let current: KubeObject;
    try {
      current = await this.options.transport.json<KubeObject>(
        'GET',
        resourcePath(resource, object.metadata?.namespace, object.metadata?.name),
      );
    } catch (error) {
      if (error instanceof KubeApiError && error.status === 404) {
        this.handedOver.delete(id);
        return false;
      }
      throw error;
    }
    const mine =
      current.metadata?.labels?.[labels.shard] === shardId && current.metadata?.labels?.[labels.drain] === undefined;
    if (mine) {
      this.handedOver.delete(id); // assigned back to this shard: its runs go on as before
      if (this.confirmed) remember(this.confirmed, id, true, this.options.rememberHandedOver ?? 10_000);
    }
    return mine;
  }

  private async tracked<R>(id: string, run: () => Promise<R>): Promise<R> {
    this.running.set(id, (this.running.get(id) ?? 0) + 1);
    try {
      return await run();
    } finally {
      const left = this.running.get(id)! - 1;
      if (left === 0) this.running.delete(id);
      else this.running.set(id, left);
    }
  }

  /** This shard is writing `child` (labelled for it), which its cache does not show yet. */
  childWritten(resource: ResourceDescriptor, child: KubeObject): void {
    if (child.metadata?.name)
      remember(this.written, objectId(resource, child), true, this.options.rememberHandedOver ?? 10_000);
  }

  /**
   * A child of a sharded owner showed up in this shard's cache. When this shard wrote it
   * (childWritten) and has since handed its owner over, it was written too late for the
   * hand-over to see it: it follows its owner now, with one write guarded by its
   * resourceVersion (a conflict means a newer version, whose event decides again). Any
   * other child stays: one moved here with its owner, or by the leader, is where it belongs.
   */
  childSeen(owner: ResourceDescriptor, resource: ResourceDescriptor, child: KubeObject): void {
    const { labels, shardId } = this.options;
    if (this.written.size === 0) return;
    const id = objectId(resource, child);
    if (!this.written.delete(id) || this.handedOver.size === 0) return;
    const ref = child.metadata?.ownerReferences?.find((r) => r.controller);
    if (!ref || ref.kind !== owner.kind || child.metadata?.labels?.[labels.shard] !== shardId) return;
    const ownerId = `${resourceName(owner)}/${owner.namespaced ? (child.metadata?.namespace ?? '') : ''}/${ref.name}`;
    const target = this.handedOver.get(ownerId);
    if (target === undefined || this.following.has(id) || !this.leaseHeld()) return;
    this.following.add(id);
    patchLabels(this.options.transport, resource, child, { [labels.shard]: target })
      .then(
        (write) => {
          if (write === 'written') this.log.info(`${id} followed its owner to shard ${target ?? '(unassigned)'}`);
        },
        (error: Error) => this.log.warn(`${id} could not follow its owner to shard ${target}: ${error.message}`),
      )
      .finally(() => this.following.delete(id));
  }

  /**
   * Relabels the cached children of `object` for shard `to`, a few at a time, each write
   * guarded by the child's resourceVersion and the shard's Lease. False when a child changed
   * meanwhile: the hand-over is tried again from the newer cache (children already moved
   * have left this shard's cache, so they are not written twice).
   */
  private async carryChildren(resource: ResourceDescriptor, object: KubeObject, to: string | null): Promise<boolean> {
    const children = this.children(resource, object);
    if (children.length === 0) return true;
    const { labels } = this.options;
    let next = 0;
    let changed = false;
    let failure: unknown;
    const worker = async () => {
      while (next < children.length && !changed && failure === undefined) {
        const child: ShardedChild = children[next++]!;
        try {
          this.options.assertWritable();
          const write: LabelWrite = await patchLabels(this.options.transport, child.resource, child.object, {
            [labels.shard]: to,
          });
          if (write === 'conflict') changed = true;
        } catch (error) {
          failure ??= error;
        }
      }
    };
    const limit = Math.min(this.options.childConcurrency ?? 8, children.length);
    await Promise.all(Array.from({ length: limit }, worker));
    if (failure !== undefined) throw failure;
    return !changed;
  }

  private async handOver<T extends KubeObject>(
    resource: ResourceDescriptor<T>,
    object: T,
    target: string,
    request: ReconcileRequest<T>,
  ) {
    const { labels, shardId } = this.options;
    const id = objectId(resource, object);
    if (this.running.has(id) || this.handing.has(id)) {
      // Another controller of this kind, or a timer, is running on the object: this run of
      // its key comes back once it had time to end (a run that ignores its abort holds it).
      request.log.debug('hand-over waits for a run of the object on this shard', { shard: shardId });
      return { requeueAfter: this.options.recheckMs ?? 100 };
    }
    this.options.assertWritable();
    const to = isLabelToken(target) ? target : null; // no valid target: unassigned, the leader assigns it
    // From the check above to the end of the write, no run of the object may start here.
    this.handing.add(id);
    let moved: boolean;
    try {
      // The children first: the target sees the object only after they are labelled for it.
      if (!(await this.carryChildren(resource, object, to))) {
        request.log.debug('hand-over waits: a child changed under its relabel; trying again', { shard: shardId });
        return { requeueAfter: this.options.recheckMs ?? 100 };
      }
      const write = await patchLabels(
        this.options.transport,
        resource,
        object,
        { [labels.shard]: to, [labels.drain]: null },
        { [DRAIN_REQUESTED_AT_ANNOTATION]: null },
      );
      moved = write === 'written';
      if (moved) remember(this.handedOver, id, to, this.options.rememberHandedOver ?? 10_000);
    } finally {
      this.handing.delete(id);
    }
    if (moved) {
      this.options.handedOver?.(secondsSince(object.metadata?.annotations?.[DRAIN_REQUESTED_AT_ANNOTATION]));
    }
    request.log.info(
      moved
        ? `handed over to shard ${to ?? '(unassigned)'}`
        : 'hand-over skipped: the object changed; its next event decides again',
      { shard: shardId },
    );
    return undefined;
  }
}

/**
 * Adds `id` as the newest of a bounded map, dropping the oldest beyond `cap`: a cache still
 * that far behind would have missed thousands of moves, and a confirmation dropped costs
 * one more read.
 */
function remember<V>(map: Map<string, V>, id: string, value: V, cap: number): void {
  map.delete(id);
  map.set(id, value);
  for (const oldest of map.keys()) {
    if (map.size <= cap) break;
    map.delete(oldest);
  }
}

/** Seconds since an RFC 3339 time written by the leader (its clock: skew shows here), or undefined. */
function secondsSince(at: string | undefined): number | undefined {
  const then = at ? Date.parse(at) : NaN;
  return Number.isNaN(then) ? undefined : Math.max(0, (Date.now() - then) / 1000);
}
