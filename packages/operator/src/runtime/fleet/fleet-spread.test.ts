import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Transport } from '@nestor/core';
import { ConfigMap } from '../../client/kinds.js';
import { FakeWatchTransport } from '../../test-support/fake-watch-transport.js';
import { InformerCache } from '../cache/informer-cache.js';
import type { ShardingHooks } from '../controller/sharding-hooks.js';
import { inertShardingHooks } from '../../test-support/sharding-hooks.js';
import type { LeaderElection } from '../leases/leader-election.js';
import { Manager } from '../manager/manager.js';
import type { ClusterPlacement, PlacedCluster } from '../controller/cluster-placement.js';
import { Fleet } from './fleet.js';

const never: LeaderElection = { acquire: () => new Promise(() => {}), release: async () => {}, onLost: () => {} };

/** A placement that records what the fleet asks, and names shard `b` for every cluster. */
function placement(): ClusterPlacement & { placed: Map<string, PlacedCluster>; unplaced: string[] } {
  const placed = new Map<string, PlacedCluster>();
  const unplaced: string[] = [];
  return {
    shardId: 'a',
    placed,
    unplaced,
    start: () => {},
    place: (name, cluster) => void placed.set(name, cluster),
    unplace: async (name) => void unplaced.push(name),
    holds: () => false,
    shardOf: () => 'b',
    stop: async () => {},
  };
}

function manager(clusters?: ClusterPlacement): Manager {
  const sharding: ShardingHooks | undefined = clusters && inertShardingHooks(never, { shardId: 'a', clusters });
  return new Manager({
    transport: {} as Transport,
    informers: new InformerCache(new FakeWatchTransport()),
    ...(sharding ? { leaderElection: never, sharding } : {}),
  });
}

const target = { kubeConfig: 'unused' as never };

describe('a fleet spread over replicas', () => {
  it('refuses spread: true on a manager without sharding, saying what to set', () => {
    assert.throws(() => new Fleet(manager(), { providers: [], spread: true }), /has no sharding: set sharding/);
  });

  it('places each named cluster instead of engaging it, lists it elsewhere, and unplaces it when it goes', async () => {
    const where = placement();
    const fleet = new Fleet(manager(where), { providers: [] });
    fleet.engage('east', target);
    fleet.engage('east', target); // named again: placed once
    assert.deepEqual([...where.placed.keys()], ['east']);
    assert.deepEqual(
      fleet.status().map(({ name, phase, shard }) => ({ name, phase, shard })),
      [{ name: 'east', phase: 'elsewhere', shard: 'b' }],
    );
    assert.equal(fleet.get('east'), undefined, 'not engaged on this replica');
    fleet.disengage('east');
    await fleet.stop(0);
    assert.deepEqual(where.unplaced, ['east']);
    assert.deepEqual(fleet.status(), []);
  });

  it('engages every member on every replica with spread: false', () => {
    const where = placement();
    const fleet = new Fleet(manager(where), { providers: [], spread: false });
    fleet.engage('east', target);
    assert.equal(where.placed.size, 0);
    assert.equal(fleet.status()[0]?.phase, 'connecting');
    void fleet.stop(0);
  });

  it('refuses a watch of member clusters on a spread fleet, saying to set spread: false', () => {
    const fleet = new Fleet(manager(placement()), { providers: [] });
    assert.throws(
      () => fleet.watch({ resource: ConfigMap, map: () => undefined, clusters: 'members' } as never),
      /ConfigMap in member clusters .* set fleet.spread to false/,
    );
  });
});
