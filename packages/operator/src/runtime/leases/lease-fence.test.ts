import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inRun } from '../../test-support/in-run.js';
import { LeaseFence, WriteOutsideRunError } from './lease-fence.js';

/** A Lease whose fence refuses writes while `held` is false. */
function lease(name: string): { held: boolean; assertWritable(): void } {
  return {
    held: true,
    assertWritable() {
      if (!this.held) throw new Error(`${name} may have expired`);
    },
  };
}

const onLeader = new Set(['audit']);
const runsOnLeader = (controller: string) => onLeader.has(controller);

describe('LeaseFence', () => {
  it('fences nothing without leader election', () => {
    const fence = new LeaseFence({ runsOnLeader });
    assert.equal(fence.fences, false);
    assert.equal(fence.leading, undefined);
    fence.of('audit').assertWritable();
    fence.of(undefined).assertWritable();
    fence.assertWritable(); // outside any run too: nothing fences
  });

  it('without sharding, asks the leader Lease for every write, explicit or ambient', () => {
    const leader = lease('the leader Lease');
    const fence = new LeaseFence({ leader, runsOnLeader });
    assert.equal(fence.fences, true);
    fence.of('shards').assertWritable();
    leader.held = false;
    for (const controller of ['audit', 'shards', undefined]) {
      assert.throws(() => fence.of(controller).assertWritable(), /the leader Lease/);
    }
    assert.throws(() => inRun('shards', () => fence.assertWritable()), /the leader Lease/);
    assert.throws(() => fence.leading!.assertWritable(), /the leader Lease/);
  });

  it('sharded: the leader Lease for a leader controller, the shard Lease for every other write', () => {
    const leader = lease('the leader Lease');
    const shard = lease('the shard Lease');
    const fence = new LeaseFence({ leader, shard, runsOnLeader });
    leader.held = false; // lost the lead, still holds its shard
    assert.throws(() => fence.of('audit').assertWritable(), /the leader Lease/);
    fence.of('shards').assertWritable();
    fence.of(undefined).assertWritable(); // outside any controller: the shard's Lease
    // The ambient path reads the controller from the context and gives the same answers.
    assert.throws(() => inRun('audit', () => fence.assertWritable()), /the leader Lease/);
    inRun('shards', () => fence.assertWritable());

    leader.held = true;
    shard.held = false;
    fence.of('audit').assertWritable();
    inRun('audit', () => fence.assertWritable());
    assert.throws(() => fence.of('shards').assertWritable(), /the shard Lease/);
    assert.throws(() => fence.of(undefined).assertWritable(), /the shard Lease/);
    assert.throws(() => inRun('shards', () => fence.assertWritable()), /the shard Lease/);
  });

  it('refuses an ambient write outside any run while a Lease fences, rather than guess which', () => {
    const leader = lease('the leader Lease');
    for (const fence of [
      new LeaseFence({ leader, runsOnLeader }),
      new LeaseFence({ leader, shard: leader, runsOnLeader }),
    ]) {
      assert.throws(() => fence.assertWritable(), WriteOutsideRunError);
      assert.throws(() => fence.assertWritable(), /outside any reconcile or timer run.*ctx\.client.*scoped/s);
      inRun('shards', () => fence.assertWritable()); // inside a run: the run's controller says which
      fence.of(undefined).assertWritable(); // explicit: a write of no controller
    }
  });
});
