import type { V1Lease } from '@kubernetes/client-node';
import { BehaviorSubject, distinctUntilChanged, filter, type Observable, type Subscription } from 'rxjs';
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
import { Lease } from '../client/kinds.js';
import type { InformerCache, InformerHandle } from '../runtime/informer.js';
import { microTime } from '../runtime/leader-election.js';
import { RING_LABEL, shardLabels } from './shard-labels.js';
import { isAvailable, nextTransition, shardIdOf, shardState, type ShardState } from './shard-state.js';

/** The holder the assigner writes into a Lease it takes; any holder but the shard id makes the shard dead. */
export const TAKEOVER_IDENTITY = 'nestor-shard-members';

export interface ShardMembersOptions {
  ring: string;
  /** The namespace of the ring's Leases. */
  namespace: string;
  /** Time for the Leases' expiry (default: the system clock); tests pass a ManualClock. */
  clock?: Clock;
  /**
   * Take the Lease of each uncertain shard (RV-guarded, holder `TAKEOVER_IDENTITY`,
   * duration doubled) so that it becomes dead and leaves the ring: the assigner's job.
   * Without it an uncertain shard stays available, as nothing proves it is gone.
   */
  takeOver?: {
    transport: Transport;
    /** Pause before retrying a takeover that failed (default 2 s). */
    retryMs?: number;
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
  private current: string[] = [];
  private readonly stateById = new Map<string, ShardState>();
  /** Leases being taken, by name, so a re-evaluation does not send a second write. */
  private readonly taking = new Set<string>();
  private stopped = false;

  constructor(
    private readonly informers: InformerCache,
    private readonly options: ShardMembersOptions,
  ) {
    shardLabels(options.ring);
    this.clock = options.clock ?? systemClock;
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

  /** Stops watching; `available$` completes. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
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
    for (const lease of informer.list()) {
      const id = shardIdOf(lease);
      const state = shardState(lease, now);
      this.stateById.set(id, state);
      if (isAvailable(state)) available.push(id);
      if (state !== 'uncertain') this.taking.delete(id);
      else if (this.options.takeOver) this.takeOver(lease);
      const at = nextTransition(lease, now);
      if (at !== undefined && (next === undefined || at < next)) next = at;
    }
    for (const id of this.taking) if (!this.stateById.has(id)) this.taking.delete(id);
    available.sort();
    this.current = available;
    this.subject.next(available);
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = next === undefined ? undefined : this.clock.setTimeout(() => this.evaluate(), next - now);
  }

  /**
   * Takes an uncertain shard's Lease, guarded by the resourceVersion seen: a shard that
   * renewed meanwhile wins (409) and stays. The write's watch event makes the shard dead.
   */
  private takeOver(lease: V1Lease): void {
    const takeOver = this.options.takeOver!;
    const name = shardIdOf(lease);
    if (this.taking.has(name)) return;
    this.taking.add(name);
    const now = microTime(new Date(this.clock.now())) as unknown as Date;
    const spec = lease.spec ?? {};
    const body: V1Lease = {
      ...lease,
      spec: {
        ...spec,
        holderIdentity: TAKEOVER_IDENTITY,
        leaseDurationSeconds: 2 * (spec.leaseDurationSeconds ?? 15),
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
        this.clock.setTimeout(() => {
          this.taking.delete(name);
          this.evaluate();
        }, takeOver.retryMs ?? 2_000);
      },
    );
  }
}
