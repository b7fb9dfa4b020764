import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Lease } from '../client/kinds.js';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { resourcePath, Transport } from '@nestor/core';
import { Lease } from '../client/kinds.js';
import { InformerCache } from '../runtime/cache/informer-cache.js';
import { ShardLease } from './shard-lease.js';
import { ShardMembers, TAKEOVER_DURATION_SECONDS, TAKEOVER_IDENTITY } from './shard-members.js';

const RING = 'e2e-ring';
/** Short leases so a crash is detected within seconds: 2 s lease, renewed every 0.5 s. */
const TIMINGS = { leaseDurationMs: 2_000, renewDeadlineMs: 1_500, retryPeriodMs: 500 };

describe('shard Leases and ShardMembers against the shared API server', () => {
  let env: TestEnvironment;
  let membersTransport: Transport;
  const transports: Transport[] = [];

  before(async () => {
    env = await TestEnvironment.start();
    membersTransport = await Transport.fromKubeConfig(env.kubeConfig);
  });
  after(async () => {
    for (const transport of transports) transport.close();
    membersTransport?.close();
    await env?.stop();
  });

  it('tracks joins, a graceful stop (dead at once) and a crash (available until taken after 2 leases)', async () => {
    const namespace = await env.createNamespace('shards');
    const cache = new InformerCache(membersTransport);
    const members = new ShardMembers(cache, { ring: RING, namespace, takeOver: { transport: membersTransport } });
    const seen: string[] = [];
    members.available$.subscribe((shards) => seen.push(shards.join(',')));
    members.start();
    await members.whenSynced(AbortSignal.timeout(30_000));
    assert.deepEqual(members.available(), []);

    // Each holder has its own connection, so that one can be cut as a crash would.
    const holders: ShardLease[] = [];
    for (const shardId of ['shard-0', 'shard-1', 'shard-2']) {
      const transport = await Transport.fromKubeConfig(env.kubeConfig);
      transports.push(transport);
      holders.push(new ShardLease(transport, { ring: RING, shardId, namespace, ...TIMINGS }));
    }
    await Promise.all(holders.map((holder) => holder.start(AbortSignal.timeout(30_000))));
    assert.ok(holders.every((holder) => holder.held));
    await waitFor(() => members.available().length === 3, { what: 'three available shards', timeoutMs: 20_000 });
    assert.deepEqual(members.available(), ['shard-0', 'shard-1', 'shard-2']);
    const lease = await env.client.request<V1Lease>('GET', resourcePath(Lease, namespace, 'shard-0'));
    assert.equal(lease.metadata?.labels?.['shard.nestor.dev/ring'], RING);
    assert.equal(lease.spec?.holderIdentity, 'shard-0');

    // Graceful stop: the Lease is released, so the shard is dead without waiting for expiry.
    await holders[0]!.stop();
    await waitFor(() => members.available().length === 2, { what: 'shard-0 to leave', timeoutMs: 20_000 });
    assert.equal(members.states().get('shard-0'), 'dead');
    const released = await env.client.request<V1Lease>('GET', resourcePath(Lease, namespace, 'shard-0'));
    assert.equal(released.spec?.holderIdentity || '', '', 'released, not taken');

    // Crash: shard-1's connection is gone, so it neither renews nor releases.
    transports[1]!.close();
    const lastRenewal = async () =>
      Date.parse(
        String((await env.client.request<V1Lease>('GET', resourcePath(Lease, namespace, 'shard-1'))).spec?.renewTime),
      );
    // Still in the ring while its Lease is merely expired (its state passes expired, then uncertain).
    await waitFor(() => members.states().get('shard-1') === 'expired', { what: 'shard-1 expired', timeoutMs: 20_000 });
    assert.deepEqual(members.available(), ['shard-1', 'shard-2']);
    const renewedAt = await lastRenewal();
    await waitFor(() => members.available().length === 1, { what: 'shard-1 to leave the ring', timeoutMs: 30_000 });
    const leftAt = Date.now();
    assert.deepEqual(members.available(), ['shard-2']);
    assert.equal(members.states().get('shard-1'), 'dead');
    assert.ok(
      leftAt >= renewedAt + 2 * TIMINGS.leaseDurationMs,
      `dead no earlier than two lease durations after the last renewal (${leftAt - renewedAt} ms)`,
    );
    const taken = await env.client.request<V1Lease>('GET', resourcePath(Lease, namespace, 'shard-1'));
    assert.equal(taken.spec?.holderIdentity, TAKEOVER_IDENTITY);
    assert.equal(taken.spec?.leaseDurationSeconds, TAKEOVER_DURATION_SECONDS, 'taken until the assigner releases it');
    assert.ok(holders[2]!.held, 'the healthy shard kept its Lease');

    // The set as published: from empty to the last shard, each emission a change.
    assert.equal(seen[0], '');
    assert.equal(seen.at(-1), 'shard-2');
    assert.ok(
      seen.every((set, i) => i === 0 || set !== seen[i - 1]),
      `distinct: ${seen.join(' | ')}`,
    );

    await holders[2]!.stop();
    await holders[1]!.stop(); // lost its Lease already: nothing to release
    members.stop();
    cache.stopAll();
  });
});
