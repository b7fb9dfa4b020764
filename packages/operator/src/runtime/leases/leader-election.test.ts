import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { afterEach, describe, it } from 'node:test';
import type { V1Lease } from '../../client/kinds.js';
import { waitFor } from '@nestor/testing';
import { KubeApiError, type RequestOptions, type Transport } from '@nestor/core';
import { LeaseLock, microTime, type LeaseLockOptions } from './leader-election.js';

const PATH = '/apis/coordination.k8s.io/v1/namespaces/ns/leases/op';
const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

/** An API server that only knows one Lease, with optimistic concurrency, and faults on demand. */
class FakeLeaseServer {
  lease?: V1Lease;
  private version = 0;
  readonly requests: Array<{ method: string; path: string; body?: V1Lease; timeoutMs?: number }> = [];
  /** Requests (by method) answered with a 500. */
  failing = new Set<string>();
  /** Requests (by method) that never answer unless the caller set a timeout. */
  hanging = new Set<string>();
  /** Extra latency of PUTs. */
  putDelayMs = 0;

  get transport(): Transport {
    return { json: this.json.bind(this) } as unknown as Transport;
  }

  count(method: string): number {
    return this.requests.filter((r) => r.method === method).length;
  }

  /** Writes the Lease as another replica would. */
  write(spec: V1Lease['spec']): void {
    this.lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'op', namespace: 'ns', resourceVersion: String(++this.version) },
      spec,
    };
  }

  private async json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const body = options.body as V1Lease | undefined;
    this.requests.push({
      method,
      path,
      ...(body ? { body: structuredClone(body) } : {}),
      ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    });
    if (this.hanging.has(method)) {
      await new Promise((_, reject) => {
        if (options.timeoutMs)
          setTimeout(() => reject(new KubeApiError(0, 'Timeout', 'no answer', method, path)), options.timeoutMs);
      });
    }
    if (this.failing.has(method)) throw new KubeApiError(500, 'InternalError', 'etcd is down', method, path);
    if (method === 'PUT' && this.putDelayMs) await new Promise((resolve) => setTimeout(resolve, this.putDelayMs));
    switch (method) {
      case 'GET':
        if (!this.lease) throw new KubeApiError(404, 'NotFound', 'leases "op" not found', method, path);
        return structuredClone(this.lease) as T;
      case 'POST':
        assert.equal(path, '/apis/coordination.k8s.io/v1/namespaces/ns/leases');
        if (this.lease) throw new KubeApiError(409, 'AlreadyExists', 'leases "op" already exists', method, path);
        this.write(body!.spec);
        return structuredClone(this.lease) as T;
      case 'PUT':
        assert.equal(path, PATH);
        if (body?.metadata?.resourceVersion !== this.lease?.metadata?.resourceVersion) {
          throw new KubeApiError(409, 'Conflict', 'the object has been modified', method, path);
        }
        this.write(body!.spec);
        return structuredClone(this.lease) as T;
      default:
        throw new Error(`unexpected ${method}`);
    }
  }
}

const locks: LeaseLock[] = [];
const aborts: AbortController[] = [];
afterEach(async () => {
  for (const abort of aborts.splice(0)) abort.abort();
  for (const lock of locks.splice(0)) await lock.release();
});

function lock(server: FakeLeaseServer, options: Partial<LeaseLockOptions> = {}): LeaseLock {
  const created = new LeaseLock(server.transport, {
    name: 'op',
    namespace: 'ns',
    identity: 'me',
    leaseDurationMs: 1000,
    renewDeadlineMs: 400,
    retryPeriodMs: 50,
    ...options,
  });
  locks.push(created);
  return created;
}

function signal(): AbortSignal {
  const abort = new AbortController();
  aborts.push(abort);
  return abort.signal;
}

describe('LeaseLock', () => {
  it('creates the Lease with the defaults of controller-runtime and MicroTime times', async () => {
    const server = new FakeLeaseServer();
    const changes: boolean[] = [];
    const lease = new LeaseLock(server.transport, {
      name: 'op',
      namespace: 'ns',
      onLeadershipChange: (leading) => changes.push(leading),
    });
    locks.push(lease);
    assert.match(lease.identity, new RegExp(`^${hostname()}_[0-9a-f]{8}$`));
    await lease.acquire(signal());
    assert.equal(lease.isLeader, true);
    assert.deepEqual(changes, [true]);
    const spec = server.lease!.spec!;
    assert.equal(spec.holderIdentity, lease.identity);
    assert.equal(spec.leaseDurationSeconds, 15);
    assert.equal(spec.leaseTransitions, 0);
    assert.match(String(spec.acquireTime), MICRO_TIME);
    assert.match(String(spec.renewTime), MICRO_TIME);
  });

  it('checks leaseDuration > renewDeadline > retryPeriod', () => {
    const server = new FakeLeaseServer();
    assert.throws(
      () => new LeaseLock(server.transport, { name: 'op', namespace: 'ns', leaseDurationMs: 10_000 }),
      /leaseDuration > renewDeadline/,
    );
    assert.throws(
      () => new LeaseLock(server.transport, { name: 'op', namespace: 'ns', retryPeriodMs: 10_000 }),
      /renewDeadline > retryPeriod/,
    );
    // A zero retry period would spin: the Nest module used to drop it silently.
    assert.throws(
      () => new LeaseLock(server.transport, { name: 'op', namespace: 'ns', retryPeriodMs: 0 }),
      /retryPeriod > 0/,
    );
  });

  it('writes MicroTime with six fractional digits', () => {
    assert.equal(microTime(new Date('2026-01-02T03:04:05.678Z')), '2026-01-02T03:04:05.678000Z');
  });

  it('waits while the holder renews, however skewed its clock, and takes the lease once it stops', async () => {
    const server = new FakeLeaseServer();
    // The holder's clock is years behind: only the changes count, seen on our own clock.
    let renewals = 0;
    const skewed = () => `2001-01-01T00:00:${String(renewals % 60).padStart(2, '0')}.000000Z`;
    server.write({
      holderIdentity: 'other',
      leaseDurationSeconds: 1,
      renewTime: skewed() as never,
      leaseTransitions: 3,
    });
    const candidate = lock(server);
    const acquired = candidate.acquire(signal());
    const started = performance.now();
    // The holder renews each time the candidate has looked, for longer than the lease lasts.
    while (performance.now() - started < 2500) {
      const seen = server.count('GET');
      await waitFor(() => server.count('GET') > seen, { what: 'the candidate to look again' });
      renewals++;
      server.write({ ...server.lease!.spec, renewTime: skewed() as never });
      assert.equal(candidate.isLeader, false, 'a lease that is being renewed must not be taken');
    }
    const stoppedAt = performance.now();
    await acquired;
    const waited = performance.now() - stoppedAt;
    assert.ok(waited >= 900, `took the lease ${waited} ms after the last renewal, before it expired`);
    const spec = server.lease!.spec!;
    assert.equal(spec.holderIdentity, 'me');
    assert.equal(spec.leaseTransitions, 4);
    assert.equal(spec.leaseDurationSeconds, 1);
  });

  it('takes a released lease on its next try', async () => {
    const server = new FakeLeaseServer();
    server.write({ holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime(new Date()) as never });
    const candidate = lock(server);
    await candidate.acquire(signal());
    assert.equal(candidate.isLeader, true);
    assert.equal(server.count('GET'), 1);
    assert.equal(server.lease!.spec!.holderIdentity, 'me');
  });

  it('renews every retry period and releases: holder cleared, a 1 s lease, transitions kept', async () => {
    const server = new FakeLeaseServer();
    const changes: boolean[] = [];
    const leader = lock(server, { onLeadershipChange: (leading) => changes.push(leading) });
    await leader.acquire(signal());
    const firstRenew = String(server.lease!.spec!.renewTime);
    await waitFor(() => server.count('PUT') >= 3, { what: 'renewals' });
    assert.notEqual(String(server.lease!.spec!.renewTime), firstRenew);
    assert.equal(server.lease!.spec!.holderIdentity, 'me');
    await leader.release();
    const spec = server.lease!.spec!;
    assert.equal(spec.holderIdentity, '');
    assert.equal(spec.leaseDurationSeconds, 1);
    assert.equal(spec.leaseTransitions, 0);
    assert.equal(leader.isLeader, false);
    assert.deepEqual(changes, [true, false]);
  });

  it('a release during a renewal waits for it instead of failing on a conflict', async () => {
    const server = new FakeLeaseServer();
    const leader = lock(server);
    await leader.acquire(signal());
    server.putDelayMs = 100;
    const puts = server.count('PUT');
    await waitFor(() => server.count('PUT') > puts, { intervalMs: 1, what: 'a renewal in flight' });
    await leader.release();
    assert.equal(server.lease!.spec!.holderIdentity, '');
  });

  it('loses the lead when it cannot renew within the renew deadline', async () => {
    const server = new FakeLeaseServer();
    const changes: boolean[] = [];
    const leader = lock(server, { onLeadershipChange: (leading) => changes.push(leading) });
    let lost = 0;
    leader.onLost(() => lost++);
    await leader.acquire(signal());
    server.failing.add('GET');
    const failedAt = performance.now();
    await waitFor(() => lost === 1, { timeoutMs: 5000, what: 'the lead to be lost' });
    assert.ok(performance.now() - failedAt >= 400 - 50, 'not before the renew deadline');
    assert.equal(leader.isLeader, false);
    assert.deepEqual(changes, [true, false]);
  });

  it('loses the lead at the renew deadline even when the API server does not answer', async () => {
    const server = new FakeLeaseServer();
    const leader = lock(server);
    let lost = 0;
    leader.onLost(() => lost++);
    await leader.acquire(signal());
    const acquiredAt = performance.now();
    server.hanging.add('GET');
    // Past the renew deadline (400 ms) the fence refuses writes, however late this process's
    // timers run on a loaded machine: no two leaders write, the 1 s lease notwithstanding.
    await new Promise((resolve) => setTimeout(resolve, 450));
    assert.ok(performance.now() - acquiredAt > 400);
    assert.throws(() => leader.assertWritable(), /renew deadline 400 ms|does not hold/);
    await waitFor(() => lost === 1, {
      timeoutMs: 5_000,
      intervalMs: 10,
      what: 'the lead to be lost despite the hanging request',
    });
    assert.equal(leader.isLeader, false);
  });

  it('loses the lead at once when another replica holds the lease', async () => {
    const server = new FakeLeaseServer();
    const leader = lock(server);
    let lost = 0;
    leader.onLost(() => lost++);
    await leader.acquire(signal());
    server.write({ ...server.lease!.spec, holderIdentity: 'usurper' });
    await waitFor(() => lost === 1, { what: 'the lead to be lost' });
    assert.equal(leader.isLeader, false);
    await leader.release();
    assert.equal(server.lease!.spec!.holderIdentity, 'usurper', 'a lost lease is not released');
  });

  it('stops trying when aborted', async () => {
    const server = new FakeLeaseServer();
    server.write({ holderIdentity: 'other', leaseDurationSeconds: 3600, renewTime: microTime(new Date()) as never });
    const candidate = lock(server);
    const abort = new AbortController();
    const acquired = candidate.acquire(abort.signal);
    await waitFor(() => server.count('GET') >= 2, { what: 'a second try' });
    abort.abort();
    await acquired;
    assert.equal(candidate.isLeader, false);
    assert.equal(server.lease!.spec!.holderIdentity, 'other');
  });
});
