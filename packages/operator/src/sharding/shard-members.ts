import type { Observable, Subscription } from 'rxjs';
import { BehaviorSubject, distinctUntilChanged, filter } from '../runtime/rx.js';
import {
  type Clock,
  KubeApiError,
  resourcePath,
  type RuntimeLogger,
  silentLogger,
  systemClock,
  type TimerHandle,
  type Transport,
} from '@nestor/core';
import { Lease, type V1Lease } from '../client/kinds.js';
import type { InformerCache, InformerHandle } from '../runtime/cache/informer-cache.js';
import { microTime } from '../runtime/leases/leader-election.js';
import { RING_LABEL, shardLabels } from './shard-labels.js';
import { isAvailable, nextTransition, shardIdOf, shardState, type ShardState } from './shard-state.js';

/** performance.now(), which no wall-clock step moves. */
const monotonicClock: Clock = { ...systemClock, now: () => performance.now() };

/** The holder the assigner writes into a Lease it takes; any holder but the shard id makes the shard dead. */
export const TAKEOVER_IDENTITY = 'nestor-shard-members';

/**
 * How long a taken Lease stays taken if no leader releases it (normally the assigner
 * releases it after the pass that moved the shard's objects): its shard may not take it
 * back before, or it could reconcile objects the pass is moving away.
 */
export const TAKEOVER_DURATION_SECONDS = 3_600;

export interface ShardMembersOptions {
  ring: string;
  /** The namespace of the ring's Leases. */
  namespace: string;
  /**
   * The clock expiry is measured on, from when each renewal was seen (default: monotonic,
   * so a wall-clock step on this machine declares nobody dead); tests pass a ManualClock.
   */
  clock?: Clock;
  /** This replica's own shard id: never taken over by itself (a thawed leader sees its own Lease stale). */
  self?: string;
  /**
   * Take the Lease of each uncertain shard (RV-guarded, holder `TAKEOVER_IDENTITY`, for
   * `TAKEOVER_DURATION_SECONDS`) so that it becomes dead and leaves the ring, and release
   * it once its objects are moved (`release`): the assigner's job.
   * Without it an uncertain shard stays available, as nothing proves it is gone.
   */
  takeOver?: {
    transport: Transport;
    /** Pause before retrying a takeover that failed (default 2 s). */
    retryMs?: number;
    /**
     * A released Lease (a clean stop, or a takeover released after its objects moved) is
     * deleted after this long dead (default 5 min): a Deployment names its pods anew at
     * every rollout, and their Leases would pile up. A shard that comes back makes a new one.
     */
    forgetDeadAfterMs?: number;
  };
  logger?: RuntimeLogger;
}

/**
 * The members of one ring as the Leases say: watches the Leases labelled
 * `shard.nestor.dev/ring=<ring>` through the shared informers, computes each shard's
 * state, and publishes the available shards (ready, expired, uncertain). Expiry makes no
 * watch event, so it re-evaluates at each computed transition time on its clock.
 */
export class ShardMembers {
  /** The available shard ids, sorted: the current set once synced, then each change. */
  readonly available$: Observable<readonly string[]>;
  private readonly subject = new BehaviorSubject<readonly string[] | undefined>(undefined);
  private readonly clock: Clock;
  private readonly log: RuntimeLogger;
  private handle?: InformerHandle<V1Lease>;
  private subscription?: Subscription;
  private timer?: TimerHandle;
  /** Takeovers waiting to be tried again after a failure. */
  private readonly retries = new Set<TimerHandle>();
  private current: string[] = [];
  private readonly stateById = new Map<string, ShardState>();
  /** When each Lease's current renewal (holder and renewTime) was first seen, on this clock: expiry is measured from it. */
  private readonly observed = new Map<string, { renewal: string; at: number }>();
  /** Throws once this replica may no longer lead: no takeover or release is written then (set by the assigner). */
  assertLeading: () => void = () => {};
  /** Leases being taken, by name, so a re-evaluation does not send a second write. */
  private readonly taking = new Set<string>();
  /** Released Leases being deleted, by name. */
  private readonly deleting = new Set<string>();
  private stopped = false;

  constructor(
    private readonly informers: InformerCache,
    private readonly options: ShardMembersOptions,
  ) {
    shardLabels(options.ring);
    this.clock = options.clock ?? monotonicClock;
    this.log = options.logger ?? silentLogger;
    this.available$ = this.subject.pipe(
      filter((shards): shards is readonly string[] => shards !== undefined),
      distinctUntilChanged((a, b) => a.length === b.length && a.every((id, i) => id === b[i])),
    );
  }

  /** Starts watching the ring's Leases (once). */
  start(): void {
    if (this.handle || this.stopped) return;
    this.handle = this.informers.acquire(Lease, {
      namespace: this.options.namespace,
      labelSelector: `${RING_LABEL}=${this.options.ring}`,
    });
    // Leases are few (one per shard): each event re-evaluates them all.
    this.subscription = this.handle.informer.events$.subscribe(() => this.evaluate());
    this.handle.informer.whenSynced().then(
      () => this.evaluate(),
      () => {}, // stopped before synced
    );
  }

  /** Resolves once the Leases were listed and the available set computed. */
  async whenSynced(signal?: AbortSignal): Promise<void> {
    if (!this.handle) throw new Error('ShardMembers.whenSynced() before start()');
    await this.handle.informer.whenSynced(signal);
    this.evaluate();
  }

  /** The available shard ids, sorted (empty before the first sync). */
  available(): string[] {
    return [...this.current];
  }

  /** Each known shard's state, as of the last evaluation. */
  states(): ReadonlyMap<string, ShardState> {
    return this.stateById;
  }

  /** The Leases taken from dead shards (holder `TAKEOVER_IDENTITY`), by name, with the resourceVersion seen. */
  taken(): Map<string, string> {
    const taken = new Map<string, string>();
    for (const lease of this.handle?.informer.list() ?? []) {
      if (lease.spec?.holderIdentity === TAKEOVER_IDENTITY && lease.metadata?.resourceVersion)
        taken.set(shardIdOf(lease), lease.metadata.resourceVersion);
    }
    return taken;
  }

  /**
   * Releases taken Leases still at the resourceVersion given (call it once a rebalance pass
   * that started after they were taken has moved their shards' objects): each shard is
   * still dead, and may take its Lease again. Failures are left for the next pass.
   */
  async release(taken: ReadonlyMap<string, string>): Promise<void> {
    const transport = this.options.takeOver?.transport;
    if (!transport) return;
    for (const [name, resourceVersion] of taken) {
      const lease = this.handle?.informer.get({ namespace: this.options.namespace, name });
      if (!lease || lease.metadata?.resourceVersion !== resourceVersion) continue;
      if (lease.spec?.holderIdentity !== TAKEOVER_IDENTITY) continue;
      this.assertLeading();
      const now = microTime(new Date());
      const body: V1Lease = {
        ...lease,
        spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: now },
      };
      try {
        await transport.json('PUT', resourcePath(Lease, this.options.namespace, name), { body });
        this.log.info(`shard ${name} of ring ${this.options.ring}: its objects moved, its Lease released`);
      } catch (error) {
        if (error instanceof KubeApiError && (error.status === 409 || error.status === 404)) continue;
        this.log.warn(`could not release the Lease of dead shard ${name}: ${(error as Error).message}`);
      }
    }
  }

  /** Stops watching; `available$` completes. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    for (const retry of this.retries) this.clock.clearTimeout(retry);
    this.retries.clear();
    this.subscription?.unsubscribe();
    this.handle?.release();
    this.subject.complete();
  }

  private evaluate(): void {
    const informer = this.handle?.informer;
    if (this.stopped || !informer?.synced) return;
    const now = this.clock.now();
    let next: number | undefined;
    const available: string[] = [];
    this.stateById.clear();
    const listed = new Set<string>();
    for (const lease of informer.list()) {
      const id = shardIdOf(lease);
      listed.add(id);
      // A renewal is a new holder or renewTime: an edit of the Lease's labels is not one.
      const renewal = `${lease.spec?.holderIdentity ?? ''} ${lease.spec?.renewTime ?? ''}`;
      let seen = this.observed.get(id);
      if (seen?.renewal !== renewal) this.observed.set(id, (seen = { renewal, at: now }));
      const state = shardState(lease, now, seen!.at);
      this.stateById.set(id, state);
      if (isAvailable(state)) available.push(id);
      if (state !== 'uncertain') this.taking.delete(id);
      else if (this.options.takeOver && id !== this.options.self) this.takeOver(lease);
      let at = nextTransition(lease, now, seen!.at);
      if (state === 'dead' && this.options.takeOver && lease.spec?.holderIdentity !== TAKEOVER_IDENTITY) {
        const forgetAt = seen!.at + (this.options.takeOver.forgetDeadAfterMs ?? 300_000);
        if (now >= forgetAt) this.forget(lease);
        else at = forgetAt;
      }
      if (at !== undefined && (next === undefined || at < next)) next = at;
    }
    for (const id of this.taking) if (!this.stateById.has(id)) this.taking.delete(id);
    for (const id of this.deleting) if (!this.stateById.has(id)) this.deleting.delete(id);
    for (const id of this.observed.keys()) if (!listed.has(id)) this.observed.delete(id);
    available.sort();
    this.current = available;
    this.subject.next(available);
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = next === undefined ? undefined : this.clock.setTimeout(() => this.evaluate(), next - now);
  }

  /** Whether this replica may still write as the leader (assertLeading does not throw). */
  private leading(): boolean {
    try {
      this.assertLeading();
      return true;
    } catch {
      return false;
    }
  }

  /** Deletes a Lease released long ago, guarded by the resourceVersion seen (a shard that took it back wins). */
  private forget(lease: V1Lease): void {
    const name = shardIdOf(lease);
    if (this.deleting.has(name) || !this.leading()) return;
    this.deleting.add(name);
    const path = resourcePath(Lease, this.options.namespace, name);
    const body = { preconditions: { resourceVersion: lease.metadata?.resourceVersion } };
    this.options.takeOver!.transport.json('DELETE', path, { body }).then(
      () => this.log.info(`shard ${name} of ring ${this.options.ring}: its Lease, released long ago, deleted`),
      (error: unknown) => {
        this.deleting.delete(name); // changed meanwhile (409), gone (404), or failed: decided again later
        if (!(error instanceof KubeApiError && (error.status === 409 || error.status === 404)))
          this.log.warn(`could not delete the released Lease of shard ${name}: ${(error as Error).message}`);
      },
    );
  }

  /**
   * Takes an uncertain shard's Lease, guarded by the resourceVersion seen: a shard that
   * renewed meanwhile wins (409) and stays. The write's watch event makes the shard dead.
   */
  private takeOver(lease: V1Lease): void {
    const takeOver = this.options.takeOver!;
    const name = shardIdOf(lease);
    if (this.taking.has(name) || !this.leading()) return; // not sure to lead: the next leader decides
    this.taking.add(name);
    const now = microTime(new Date());
    const spec = lease.spec ?? {};
    const body: V1Lease = {
      ...lease,
      spec: {
        ...spec,
        holderIdentity: TAKEOVER_IDENTITY,
        leaseDurationSeconds: TAKEOVER_DURATION_SECONDS,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: (spec.leaseTransitions ?? 0) + 1,
      },
    };
    const path = resourcePath(Lease, this.options.namespace, name);
    takeOver.transport.json('PUT', path, { body }).then(
      () => {
        // Still marked as taking until the watch shows the write (then the state is dead).
        this.log.info(`shard ${name} of ring ${this.options.ring} is dead: its Lease was not renewed, taken`);
      },
      (error: unknown) => {
        if (error instanceof KubeApiError && (error.status === 409 || error.status === 404)) {
          this.taking.delete(name); // renewed or deleted meanwhile: the watch event re-evaluates
          return;
        }
        this.log.warn(`could not take the Lease of shard ${name}: ${(error as Error).message}`);
        const retry = this.clock.setTimeout(() => {
          this.retries.delete(retry);
          this.taking.delete(name);
          this.evaluate();
        }, takeOver.retryMs ?? 2_000);
        this.retries.add(retry);
      },
    );
  }
}
