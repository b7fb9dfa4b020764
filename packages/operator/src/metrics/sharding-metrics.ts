import type { Registry } from 'prom-client';
import { prom } from './prom-client.js';
import type { ShardingMetrics } from '../runtime/controller/sharding-hooks.js';

/** The metrics of one shard of a ring: moves and passes (on the leader), hand-overs and cached objects (on each shard). */
export function shardingMetrics(registry: Registry, ring: string, shard: string): ShardingMetrics {
  const registers = [registry];
  const moves = new prom.Counter({
    name: 'nestor_shard_moves_total',
    help: 'Shard label writes of the assigner: assign (a new object, or one of a dead shard) or drain (a live shard asked to let go)',
    labelNames: ['ring', 'type'],
    registers,
  });
  const passes = new prom.Histogram({
    name: 'nestor_shard_rebalance_duration_seconds',
    help: 'Rebalance passes of the assigner over every sharded object: a metadata LIST and the moves it planned',
    labelNames: ['ring'],
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers,
  });
  const handovers = new prom.Counter({
    name: 'nestor_shard_handovers_total',
    help: 'Objects this shard handed over to another after a drain request',
    labelNames: ['ring', 'shard'],
    registers,
  });
  const drains = new prom.Histogram({
    name: 'nestor_shard_drain_duration_seconds',
    help: 'From the leader asking this shard to let an object go to the hand-over (waiting for its running reconcile), on the leader clock',
    labelNames: ['ring', 'shard'],
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers,
  });
  let read: () => number = () => 0;
  new prom.Gauge({
    name: 'nestor_shard_objects',
    help: 'Objects of sharded kinds this shard caches and reconciles',
    labelNames: ['ring', 'shard'],
    registers,
    collect() {
      this.set({ ring, shard }, read());
    },
  });
  for (const type of ['assign', 'drain']) moves.inc({ ring, type }, 0);
  handovers.inc({ ring, shard }, 0);
  passes.zero({ ring });
  drains.zero({ ring, shard });
  return {
    moved: (type) => moves.inc({ ring, type }),
    rebalanced: (seconds) => passes.observe({ ring }, seconds),
    handedOver: (waitedSeconds) => {
      handovers.inc({ ring, shard });
      if (waitedSeconds !== undefined) drains.observe({ ring, shard }, waitedSeconds);
    },
    objects: (source) => {
      read = source;
    },
  };
}
