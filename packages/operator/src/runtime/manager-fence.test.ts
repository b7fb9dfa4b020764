import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject, Transport } from '@nestor/core';
import { withReportingController } from '../client/event-recorder.js';
import { ConfigMap } from '../client/kinds.js';
import { FakeWatchTransport } from '../test-support/fake-watch-transport.js';
import { InformerCache } from './informer.js';
import { Manager, type LeaderElection } from './manager.js';
import type { ShardScope } from './shard-scope.js';

/** A lease whose fence refuses writes while `held` is false. */
function lease(name: string): LeaderElection & { held: boolean } {
  return {
    held: true,
    acquire: () => new Promise(() => {}),
    release: async () => {},
    onLost: () => {},
    assertWritable() {
      if (!this.held) throw new Error(`${name} may have expired`);
    },
  };
}

function shardScope(membership: LeaderElection): ShardScope {
  return {
    shardId: 'shard-a',
    selector: 'shard.nestor.dev/r=shard-a',
    membership,
    bypassesPredicates: () => false,
    wrap: (_resource, reconcile) => reconcile,
    wrapTimer: (_resource, timer) => timer,
    addKinds: () => {},
    assign: async () => {},
  };
}

describe('the write fence of a sharded manager', () => {
  it('checks the leader Lease inside a sharded: false controller, the shard Lease everywhere else', () => {
    const leader = lease('the leader Lease');
    const shard = lease('the shard Lease');
    const manager = new Manager({
      transport: {} as Transport,
      informers: new InformerCache(new FakeWatchTransport()),
      leaderElection: leader,
      sharding: shardScope(shard),
    });
    const reconcile = () => {};
    manager.addController<KubeObject>({ name: 'shards', resource: ConfigMap, reconcile });
    manager.addController<KubeObject>({ name: 'audit', resource: ConfigMap, sharded: false, reconcile });
    const fence = manager.writeFence!;

    leader.held = false; // lost the lead, still holds its shard
    assert.throws(() => withReportingController('audit', () => fence.assertWritable()), /the leader Lease/);
    withReportingController('shards', () => fence.assertWritable());
    fence.assertWritable(); // outside any controller: the shard's Lease

    leader.held = true;
    shard.held = false;
    withReportingController('audit', () => fence.assertWritable());
    assert.throws(() => withReportingController('shards', () => fence.assertWritable()), /the shard Lease/);
    assert.throws(() => fence.assertWritable(), /the shard Lease/);
  });
});
