import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitFor } from '@nestor/testing';
import { LeaseLoops, type CoordinationEvents } from './lease-loops.js';
import type { LeaderElection } from '../leases/leader-election.js';
import type { ShardingHooks } from '../controller/sharding-hooks.js';
import { inertShardingHooks } from '../../test-support/sharding-hooks.js';

/** A Lease granted and taken away by the test. */
class FakeLease implements LeaderElection {
  held = false;
  acquisitions = 0;
  released = 0;
  private grant?: () => void;
  private readonly lostListeners: Array<() => void> = [];

  constructor(
    private readonly name: string,
    private readonly order: string[] = [],
  ) {}

  acquire(signal: AbortSignal): Promise<void> {
    this.acquisitions++;
    return new Promise((resolve) => {
      this.grant = () => {
        this.held = true;
        resolve();
      };
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
  }

  /** Another replica let it go: the pending acquire() succeeds. */
  give(): void {
    this.grant?.();
    this.grant = undefined;
  }

  /** Another replica took it over. */
  lose(): void {
    this.held = false;
    for (const listener of this.lostListeners) listener();
  }

  async release(): Promise<void> {
    this.released++;
    this.held = false;
    this.order.push(`release ${this.name}`);
  }

  onLost(listener: () => void): void {
    this.lostListeners.push(listener);
  }

  assertWritable(): void {
    if (!this.held) throw new Error(`${this.name} is not held`);
  }
}

/** What the coordinator told its owner, in order. */
function recorder(): CoordinationEvents & { seen: string[] } {
  const seen: string[] = [];
  return {
    seen,
    led: () => void seen.push('led'),
    lostLead: async () => void seen.push('lostLead'),
    heldShard: () => void seen.push('heldShard'),
    lostShard: async () => void seen.push('lostShard'),
  };
}

function shardScope(
  membership: LeaderElection,
  assigner: { runs: AbortSignal[]; fences: Array<() => void> },
): ShardingHooks {
  return inertShardingHooks(membership, {
    assign: (signal, assertLeading) => {
      assigner.runs.push(signal);
      if (assertLeading) assigner.fences.push(assertLeading);
      return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
  });
}

const runsOnLeader = () => false;

describe('LeaseLoops', () => {
  it('leads at once without leader election, and fences nothing', async () => {
    const coordination = new LeaseLoops({ runsOnLeader });
    const events = recorder();
    coordination.start(events);
    assert.deepEqual(events.seen, ['led']);
    assert.equal(coordination.isLeader, true);
    assert.equal(coordination.fence.fences, false);
    await coordination.stop();
    assert.equal(coordination.isLeader, false);
  });

  it('refuses sharding without leader election', () => {
    const assigner = { runs: [], fences: [] };
    assert.throws(
      () => new LeaseLoops({ runsOnLeader, sharding: shardScope(new FakeLease('shard'), assigner) }),
      /sharding needs leader election/,
    );
  });

  it('leads once the Lease is won, stands by when it is lost, campaigns again and leads again', async () => {
    const leader = new FakeLease('the leader Lease');
    const coordination = new LeaseLoops({ runsOnLeader, leaderElection: leader });
    const events = recorder();
    coordination.start(events);
    assert.equal(coordination.isLeader, false);
    assert.deepEqual(events.seen, []);
    assert.throws(() => coordination.fence.of(undefined).assertWritable(), /the leader Lease is not held/);

    leader.give();
    await waitFor(() => coordination.isLeader, { what: 'the lead' });
    assert.deepEqual(events.seen, ['led']);
    coordination.fence.of(undefined).assertWritable();

    leader.lose();
    await waitFor(() => events.seen.length === 2, { what: 'the loss to be told' });
    assert.deepEqual(events.seen, ['led', 'lostLead']);
    assert.equal(coordination.isLeader, false);
    assert.throws(() => coordination.fence.of(undefined).assertWritable(), /the leader Lease is not held/);
    await waitFor(() => leader.acquisitions === 2, { what: 'a new campaign' });

    leader.give();
    await waitFor(() => coordination.isLeader, { what: 'the lead again' });
    assert.deepEqual(events.seen, ['led', 'lostLead', 'led']);
    await coordination.stop();
    assert.equal(leader.released, 1);
    assert.equal(coordination.isLeader, false);
  });

  it('after halt() takes no Lease and tells nothing; stop() still releases', async () => {
    const leader = new FakeLease('the leader Lease');
    const coordination = new LeaseLoops({ runsOnLeader, leaderElection: leader });
    const events = recorder();
    coordination.start(events);
    coordination.halt();
    leader.give();
    await coordination.stop();
    assert.deepEqual(events.seen, []);
    assert.equal(leader.released, 1);
  });

  it('sharded: holds the shard Lease apart from the lead, assigns while leading, releases the shard first', async () => {
    const order: string[] = [];
    const leader = new FakeLease('the leader Lease', order);
    const shard = new FakeLease('the shard Lease', order);
    const assigner = { runs: [] as AbortSignal[], fences: [] as Array<() => void> };
    const coordination = new LeaseLoops({
      runsOnLeader,
      leaderElection: leader,
      sharding: shardScope(shard, assigner),
    });
    const events = recorder();
    coordination.start(events);

    shard.give();
    await waitFor(() => coordination.holdsShard, { what: 'the shard Lease' });
    assert.deepEqual(events.seen, ['heldShard']);
    assert.equal(assigner.runs.length, 0, 'only the leader assigns');

    leader.give();
    await waitFor(() => assigner.runs.length === 1, { what: 'the assigner to start' });
    assert.deepEqual(events.seen, ['heldShard', 'led']);
    assigner.fences[0]!();

    // The assigner's writes are fenced by the leader Lease, and it stops when the lead is lost.
    leader.lose();
    await waitFor(() => events.seen.includes('lostLead'), { what: 'the loss of the lead' });
    assert.equal(assigner.runs[0]!.aborted, true);
    assert.throws(() => assigner.fences[0]!(), /the leader Lease is not held/);
    assert.equal(coordination.holdsShard, true, 'the shard Lease is held apart from the lead');

    shard.lose();
    await waitFor(() => events.seen.includes('lostShard'), { what: 'the loss of the shard' });
    assert.equal(coordination.holdsShard, false);

    await coordination.stop();
    assert.deepEqual(order, ['release the shard Lease', 'release the leader Lease']);
  });
});
