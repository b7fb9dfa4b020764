import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import {
  type Connectivity,
  isUnreachable,
  KubeApiError,
  resourcePath,
  type RuntimeLogger,
  silentLogger,
  sleepUntilReady,
  type Transport,
} from '@nestor/core';
import { Lease as LeaseResource, type V1Lease } from '../../client/kinds.js';
import type { LeaseTiming } from './lease-timing.js';

/** Runs while this process should reconcile; returns when it must stop (lease lost). */
export interface LeaderElection {
  /** Resolves once this process leads. */
  acquire(signal: AbortSignal): Promise<void>;
  /** Gives the lead up at once so a standby takes over (clean shutdown). */
  release(): Promise<void>;
  /** Registers what to do when the lead is lost while running. */
  onLost(listener: (loss?: LeaseLoss) => void): void;
  /** Throws unless this replica may write now (see LeaseLock.assertWritable); the write fence asks it. */
  assertWritable?(): void;
}

/** Why the lead was lost. */
export interface LeaseLoss {
  /**
   * True when no renewal got an answer within the renew deadline and the Lease, when last
   * read, named this replica: the API server was unreachable (or this process was frozen),
   * nobody is known to hold the Lease instead, and this replica takes it back (its own
   * record, no wait) when the server answers. If the next read shows another holder, the
   * listeners hear of the loss again, with false. False when another replica holds it or
   * the server refused the renewal.
   */
  unreachable: boolean;
}

export interface LeaseLockOptions extends LeaseTiming {
  /** The Lease's name: one per operator, shared by its replicas. */
  name: string;
  namespace: string;
  /** This replica's identity (default: hostname + random suffix). */
  identity?: string;
  logger?: RuntimeLogger;
  /** Told whenever this replica gains or loses the lead (for the master-status metric). */
  onLeadershipChange?: (leading: boolean) => void;
  /** Labels written with every acquire and renewal, merged over the Lease's own (shard Leases carry their ring's). */
  labels?: Record<string, string>;
}

/**
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's semantics: a lease
 * is taken when its holder has not renewed it for leaseDuration (measured on this
 * replica's clock from when it last saw the record change, so clock skew does not
 * matter); the leader renews every retryPeriod and steps down if it could not renew
 * within renewDeadline; on clean shutdown it releases the lease so a standby takes over
 * at once.
 */
export class LeaseLock implements LeaderElection {
  readonly identity: string;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly log: RuntimeLogger;
  private readonly path: string;
  private observed?: { holder: string; renewTime: string; resourceVersion: string };
  private observedAt = 0;
  private lease?: V1Lease;
  private leading = false;
  private renewTimer?: NodeJS.Timeout;
  private renewing?: Promise<void>;
  private lastRenew = 0;
  /** performance.now() when the last successful acquire or renewal was sent: the lease is ours from then on. */
  private heldSince = 0;
  private readonly lostListeners: Array<(loss: LeaseLoss) => void> = [];
  /** Lost for want of an answer (LeaseLoss.unreachable): the next read of the Lease says whether another replica took it. */
  private lapsed = false;

  constructor(
    private readonly transport: Transport,
    private readonly options: LeaseLockOptions,
  ) {
    this.identity = options.identity ?? `${hostname()}_${randomBytes(4).toString('hex')}`;
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    if (
      this.leaseDurationMs <= this.renewDeadlineMs ||
      this.renewDeadlineMs <= this.retryPeriodMs ||
      !(this.retryPeriodMs > 0)
    ) {
      throw new Error(
        'leader election needs leaseDuration > renewDeadline > retryPeriod > 0 (defaults 15 s, 10 s, 2 s)',
      );
    }
    this.log = options.logger ?? silentLogger;
    this.path = resourcePath(LeaseResource, options.namespace, options.name);
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /**
   * Fences writes (KubeClient calls it before each): throws unless this replica leads and
   * its lease cannot have expired for anyone else. Others measure expiry from when they
   * saw the last renewal, which is no earlier than when it was sent; this replica allows
   * itself renewDeadline from that moment, leaseDuration - renewDeadline less than they do,
   * on the monotonic clock, so a process frozen (SIGSTOP, a long GC, a VM pause) past its
   * lease refuses the writes it wakes up with.
   */
  assertWritable(): void {
    const age = performance.now() - this.heldSince;
    if (this.leading && age <= this.renewDeadlineMs) return;
    throw new LeaseLostError(
      this.leading
        ? `this replica's lease ${this.options.namespace}/${this.options.name} was last renewed ${Math.round(age)} ms ago (renew deadline ${this.renewDeadlineMs} ms): another replica may hold it, so this write is refused`
        : `this replica does not hold the lease ${this.options.namespace}/${this.options.name}: only the leader writes, so this write is refused`,
    );
  }

  onLost(listener: (loss: LeaseLoss) => void): void {
    this.lostListeners.push(listener);
  }

  /**
   * Tries every retryPeriod (jittered) until this replica holds the lease; sooner when the
   * holder's lease expires first (on this replica's clock), or when the API server answers
   * again after a try got no response (the outage gate's probe, every 250 ms, then every second).
   */
  async acquire(signal: AbortSignal): Promise<void> {
    let announced = false;
    while (!signal.aborted) {
      let outage = false;
      let retryMs = this.retryPeriodMs * (1 + Math.random() * 1.2);
      try {
        if (await this.tryAcquireOrRenew()) {
          this.lapsed = false;
          this.becomeLeader();
          return;
        }
        if (this.lapsed) {
          // The lease lapsed while the server was away, and another replica holds it now.
          this.lapsed = false;
          for (const listener of this.lostListeners) listener({ unreachable: false });
        }
        if (!announced) {
          this.log.info(
            `lease ${this.options.namespace}/${this.options.name} is held by ${this.observed?.holder}; waiting`,
            {
              identity: this.identity,
            },
          );
          announced = true;
        }
        const expiresInMs = this.expiresAt() - performance.now();
        if (expiresInMs > 0) retryMs = Math.min(retryMs, expiresInMs + 1);
      } catch (error) {
        this.log.warn(
          `could not acquire lease ${this.options.namespace}/${this.options.name}: ${(error as Error).message}`,
        );
        // No response, or an answer while the server is not ready again (403 before its
        // RBAC has synced): try again when the outage gate finds it ready.
        const connectivity = this.transport.connectivity as Connectivity | undefined;
        outage = connectivity !== undefined && (isUnreachable(error) || connectivity.inOutage);
      }
      await sleepUntilReady(retryMs, { signal, connectivity: outage ? this.transport.connectivity : undefined });
    }
  }

  /** When the observed holder's lease expires for this replica (performance.now() time; -Infinity when free). */
  private expiresAt(): number {
    if (!this.lease || !this.observed?.holder) return -Infinity;
    const seconds = this.lease.spec?.leaseDurationSeconds ?? Math.ceil(this.leaseDurationMs / 1000);
    return this.observedAt + seconds * 1000;
  }

  /** Releases the lease if held: the holder is cleared so a standby acquires it on its next try. */
  async release(): Promise<void> {
    clearTimeout(this.renewTimer);
    // A renewal in flight would race the release with the same resourceVersion (409): let it land first.
    await this.renewing;
    clearTimeout(this.renewTimer);
    if (!this.leading || !this.lease) return;
    this.setLeading(false);
    const now = microTime(new Date());
    try {
      await this.transport.json('PUT', this.path, {
        timeoutMs: this.renewDeadlineMs,
        body: {
          ...this.lease,
          spec: { ...this.lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: now, acquireTime: now },
        },
      });
      this.log.info(`released lease ${this.options.namespace}/${this.options.name}`, { identity: this.identity });
    } catch (error) {
      this.log.warn(
        `could not release lease ${this.options.namespace}/${this.options.name}: ${(error as Error).message}`,
      );
    }
  }

  private becomeLeader(): void {
    this.setLeading(true);
    this.lastRenew = performance.now();
    // Whether every renewal that failed since the last success got no response at all.
    let unanswered = true;
    this.log.info(`became leader on lease ${this.options.namespace}/${this.options.name}`, { identity: this.identity });
    const renew = async () => {
      try {
        // Bounded by the renew deadline (as client-go's context): a request the API server never
        // answers must not keep this replica leading past it while a standby takes the lease.
        if (await this.tryAcquireOrRenew(this.lastRenew + this.renewDeadlineMs)) {
          this.lastRenew = performance.now();
          unanswered = true;
        }
      } catch (error) {
        // An answer while the server is not ready again (403 while its RBAC syncs) says no more.
        const connectivity = this.transport.connectivity as Connectivity | undefined;
        if (!isUnreachable(error) && !connectivity?.inOutage) unanswered = false;
        this.log.warn(`lease renewal failed: ${(error as Error).message}`);
      }
      if (!this.leading) return; // released meanwhile
      const taken = this.observed?.holder !== this.identity;
      if (performance.now() - this.lastRenew > this.renewDeadlineMs || taken) {
        this.setLeading(false);
        const unreachable = !taken && unanswered;
        this.lapsed = unreachable;
        this.log.error(
          `lost lease ${this.options.namespace}/${this.options.name}: ${
            taken
              ? `${this.observed?.holder || 'nobody'} holds it now`
              : `not renewed within ${this.renewDeadlineMs} ms${unreachable ? ' (the API server did not answer)' : ''}`
          }`,
        );
        for (const listener of this.lostListeners) listener({ unreachable });
        return;
      }
      schedule();
    };
    const schedule = () => {
      this.renewTimer = setTimeout(() => {
        this.renewing = renew().finally(() => (this.renewing = undefined));
      }, this.retryPeriodMs);
    };
    schedule();
  }

  private setLeading(leading: boolean): void {
    if (this.leading === leading) return;
    this.leading = leading;
    this.options.onLeadershipChange?.(leading);
  }

  /**
   * One round of client-go's tryAcquireOrRenew; true when this replica holds the lease
   * afterwards. Its requests give up at `deadline` (performance.now() time; default: the
   * renew deadline from now).
   */
  private async tryAcquireOrRenew(deadline = performance.now() + this.renewDeadlineMs): Promise<boolean> {
    const timeoutMs = () => Math.max(1, Math.round(deadline - performance.now()));
    const sentAt = performance.now();
    const now = new Date();
    const durationSeconds = Math.ceil(this.leaseDurationMs / 1000);
    let current: V1Lease;
    try {
      current = await this.transport.json<V1Lease>('GET', this.path, { timeoutMs: timeoutMs() });
    } catch (error) {
      if (!(error instanceof KubeApiError && error.status === 404)) throw error;
      const created = await this.transport.json<V1Lease>('POST', resourcePath(LeaseResource, this.options.namespace), {
        timeoutMs: timeoutMs(),
        body: {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: {
            name: this.options.name,
            namespace: this.options.namespace,
            ...(this.options.labels ? { labels: this.options.labels } : {}),
          },
          spec: {
            holderIdentity: this.identity,
            leaseDurationSeconds: durationSeconds,
            acquireTime: microTime(now),
            renewTime: microTime(now),
            leaseTransitions: 0,
          },
        },
      });
      this.remember(created);
      this.heldSince = sentAt;
      return true;
    }
    this.remember(current);
    const spec = current.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const heldByUs = holder === this.identity;
    const validFor = (spec.leaseDurationSeconds ?? durationSeconds) * 1000;
    if (holder && !heldByUs && performance.now() < this.observedAt + validFor) return false;

    const labels = this.options.labels;
    const renewed: V1Lease = {
      ...current,
      ...(labels ? { metadata: { ...current.metadata, labels: { ...current.metadata?.labels, ...labels } } } : {}),
      spec: {
        ...spec,
        holderIdentity: this.identity,
        leaseDurationSeconds: durationSeconds,
        renewTime: microTime(now),
        ...(heldByUs ? {} : { acquireTime: microTime(now), leaseTransitions: (spec.leaseTransitions ?? 0) + 1 }),
      },
    };
    try {
      // Others see the renewal once the PUT is applied, after it is sent: the fence counts from
      // the PUT, not the GET before it. From the GET, a slow etcd (1 s each way: each request
      // 2 s) left writes refused for 2 s of every renew cycle while the lease was held.
      const putAt = performance.now();
      // PUT carries the resourceVersion just read: if another replica wrote meanwhile, 409.
      this.remember(await this.transport.json<V1Lease>('PUT', this.path, { body: renewed, timeoutMs: timeoutMs() }));
      this.heldSince = putAt;
      return true;
    } catch (error) {
      if (error instanceof KubeApiError && error.status === 409) return false;
      throw error;
    }
  }

  private remember(lease: V1Lease): void {
    this.lease = lease;
    const record = {
      holder: lease.spec?.holderIdentity ?? '',
      renewTime: lease.spec?.renewTime ?? '',
      resourceVersion: lease.metadata?.resourceVersion ?? '',
    };
    if (!this.observed || this.observed.holder !== record.holder || this.observed.renewTime !== record.renewTime) {
      this.observedAt = performance.now();
    }
    this.observed = record;
  }
}

/** A write refused because this replica does not hold, or may no longer hold, the lease. */
export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError';
}

/** A Lease's times are MicroTime: RFC 3339 with exactly six fractional digits, which the API server insists on. */
export function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
