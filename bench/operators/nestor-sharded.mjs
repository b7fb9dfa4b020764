#!/usr/bin/env node
// One replica of a sharded operator, for bench/sharding.mjs: a Nest application context with
// OperatorModule.forRoot({ leaderElection, sharding }) and a @Controller(ConfigMap) whose
// reconcile writes back what it saw (the annotation bench.nestor.dev/observed = data.v), as
// an operator writes status. Without --ring it runs unsharded (the baseline). With
// --children N it owns Secrets and server-side applies N of them per ConfigMap (~512 B each)
// before the write back, as an operator manages its children.
//   node bench/operators/nestor-sharded.mjs --kubeconfig F --namespace NS --mode reconcile --workers 8 \
//     [--ring R --shard S] [--children N]
// Line protocol (bench/operators/protocol.mjs): {ev:'hello'}, then {cmd:'stats', reset?} ->
// {ev:'stats', cpuUs, rss, heap, cached, children, reconciles, writes, latencies: {p50, p99, n}} where
// a latency is from the change (data.at, µs on this machine's clock) to its reconcile's start.
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { args, cpuUs, memory, send } from './protocol.mjs';
import { nowUs, percentile } from '../lib/common.mjs';

const { ConfigMap, Controller, KubeClient, Manager, OperatorModule, Reconcile, Secret } =
  await import('@nestor/operator');
const { kubeconfig, namespace, workers, ring, shard } = args();
const CHILDREN = Number(args().children ?? 0);
const CHILD_PAYLOAD = 'y'.repeat(512);

const OBSERVED = 'bench.nestor.dev/observed';
let reconciles = 0;
let writes = 0;
let latencies = [];

class Mirror {
  constructor(kube) {
    this.kube = kube;
  }

  async reconcile(configMap) {
    reconciles++;
    const at = Number(configMap.data?.at ?? 0);
    if (at > 0) latencies.push(nowUs() - at);
    const v = configMap.data?.v ?? '';
    if (configMap.metadata?.annotations?.[OBSERVED] === v) return;
    const { namespace, name } = configMap.metadata;
    for (let i = 0; i < CHILDREN; i++) {
      await this.kube.apply(
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { namespace, name: `${name}-${i}` },
          stringData: { p: CHILD_PAYLOAD },
        },
        { owner: configMap },
      );
    }
    await this.kube.patch(ConfigMap, { namespace, name }, { metadata: { annotations: { [OBSERVED]: v } } });
    writes++;
  }
}
Reflect.decorate(
  [Reconcile()],
  Mirror.prototype,
  'reconcile',
  Object.getOwnPropertyDescriptor(Mirror.prototype, 'reconcile'),
);
Reflect.defineMetadata('design:paramtypes', [KubeClient], Mirror);
Reflect.decorate(
  [Controller(ConfigMap, { maxConcurrentReconciles: workers, ...(CHILDREN > 0 ? { owns: [Secret] } : {}) })],
  Mirror,
);

class AppModule {}
Reflect.decorate(
  [
    Module({
      imports: [
        OperatorModule.forRoot({
          kubeConfig: kubeconfig,
          namespace,
          concurrency: workers,
          readFlags: false,
          metrics: { port: 0 },
          health: { port: 0 },
          leaderElection: {
            id: ring ?? 'bench-baseline',
            namespace,
            ...(shard ? { identity: shard } : {}),
            leaseDurationMs: 4_000,
            renewDeadlineMs: 3_000,
            retryPeriodMs: 1_000,
          },
          ...(ring ? { sharding: { ring, shardId: shard } } : {}),
        }),
      ],
      providers: [Mirror],
    }),
  ],
  AppModule,
);

const app = await NestFactory.createApplicationContext(AppModule, { logger: ['error'] });
app.enableShutdownHooks();
const manager = app.get(Manager);
send({ ev: 'hello' });

const { createInterface } = await import('node:readline');
createInterface({ input: process.stdin }).on('line', async (line) => {
  const command = JSON.parse(line);
  if (command.cmd === 'exit') {
    await app.close();
    process.exit(0);
  }
  if (command.cmd !== 'stats') return;
  const sorted = latencies.sort((a, b) => a - b);
  const controller = manager.getController('Mirror');
  send({
    ev: 'stats',
    cpuUs: cpuUs(),
    ...memory(command.gc),
    cached: ring ? manager.shardedObjects - manager.shardedChildren : (controller?.cachedObjects ?? 0),
    children: ring ? manager.shardedChildren : (controller?.cachedChildren ?? 0),
    reconciles,
    writes,
    latencies: { n: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99) },
  });
  if (command.reset) {
    reconciles = 0;
    writes = 0;
    latencies = [];
  }
});
