// A small operator application for the production end-to-end tests, run as a separate
// process so several replicas can compete for one Lease. Configured through the
// environment:
//   KUBECONFIG                  the control plane
//   NESTOR_NAMESPACE            the namespace it watches and holds its Lease in
//   NESTOR_IDENTITY             this replica's identity
//   NESTOR_LEASE_ID             the Lease's name
//   NESTOR_LEASE_MS, NESTOR_RENEW_MS, NESTOR_RETRY_MS   lease timings (default: the framework's)
//   NESTOR_SYNC_MS              the cache sync timeout (default: the framework's)
//   NESTOR_WORKERS              maxConcurrentReconciles (default 1)
//   NESTOR_SHARDING             set: sharded, with the identity as shard id and the Lease id as ring;
//                               it then prints 'cache' lines with what its ConfigMap informers hold
// It reconciles ConfigMaps: each reconcile prints a 'start' and an 'end' JSON line with its
// identity, key and timestamps, and sleeps data.sleepMs in between. With data.write set, it
// then writes its identity into the annotation nestor.test/written-by, and data.v into
// nestor.test/observed (what it converged on), through KubeClient
// and prints 'write' with ok: true, or ok: false and the error when the write is refused
// (the reconcile then fails, and is retried with backoff).
// Other JSON lines: 'ready' once the application context is up, 'exit' when the process exits.
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { V1ConfigMap } from '../client/kinds.js';
import {
  ConfigMap,
  Controller,
  InformerCache,
  KubeClient,
  OperatorModule,
  Reconcile,
  type ReconcileContext,
} from '../index.js';

/** One line of this process's test protocol on stdout. */
export interface OperatorEvent {
  nestorTest: true;
  event: 'ready' | 'start' | 'end' | 'exit' | 'write' | 'cache';
  /** 'cache': the ConfigMaps this replica's informers hold. */
  size?: number;
  ok?: boolean;
  error?: string;
  identity: string;
  at: number;
  key?: string;
  start?: number;
  end?: number;
  code?: number;
  /** 'write': the data.v it wrote as observed, and the resourceVersion it read. */
  v?: string;
  rv?: string;
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`lease-operator: set ${name}`);
  return value;
}

function optionalNumber(name: string): number | undefined {
  const value = process.env[name];
  return value ? Number(value) : undefined;
}

const identity = required('NESTOR_IDENTITY');
const namespace = required('NESTOR_NAMESPACE');

function emit(event: Omit<OperatorEvent, 'nestorTest' | 'identity' | 'at'> & { at?: number }): void {
  process.stdout.write(`${JSON.stringify({ nestorTest: true, identity, at: Date.now(), ...event })}\n`);
}

@Controller(ConfigMap, { maxConcurrentReconciles: Number(process.env['NESTOR_WORKERS'] ?? 1) })
class RecordingController {
  constructor(private readonly kube: KubeClient) {}

  @Reconcile()
  async reconcile(configMap: V1ConfigMap, ctx: ReconcileContext): Promise<void> {
    const start = Date.now();
    emit({ event: 'start', key: ctx.key, at: start });
    const sleepMs = Number(configMap.data?.['sleepMs'] ?? 0);
    if (sleepMs > 0) await new Promise((resolve) => setTimeout(resolve, sleepMs));
    let failure: unknown;
    if (configMap.data?.['write']) {
      try {
        await this.kube.patch(ConfigMap, ctx.request, {
          metadata: {
            annotations: { 'nestor.test/written-by': identity, 'nestor.test/observed': configMap.data?.['v'] ?? '' },
          },
        });
        emit({
          event: 'write',
          key: ctx.key,
          ok: true,
          v: configMap.data?.['v'],
          rv: configMap.metadata?.resourceVersion,
        });
      } catch (error) {
        emit({ event: 'write', key: ctx.key, ok: false, error: (error as Error).message });
        failure = error;
      }
    }
    emit({ event: 'end', key: ctx.key, start, end: Date.now() });
    // As the controller-runtime peer (bench/controller-runtime/chaos.go): a failed write fails
    // the reconcile, retried with backoff. Swallowed, it left the object unconverged for good.
    if (failure) throw failure;
  }
}

const leaseDurationMs = optionalNumber('NESTOR_LEASE_MS');
const renewDeadlineMs = optionalNumber('NESTOR_RENEW_MS');
const retryPeriodMs = optionalNumber('NESTOR_RETRY_MS');
const cacheSyncTimeoutMs = optionalNumber('NESTOR_SYNC_MS');
const sharded = Boolean(process.env['NESTOR_SHARDING']);

@Module({
  imports: [
    OperatorModule.forRoot({
      kubeConfig: required('KUBECONFIG'),
      namespace,
      metrics: { port: 0 },
      health: { port: 0 },
      ...(cacheSyncTimeoutMs ? { cacheSyncTimeoutMs } : {}),
      ...(sharded ? { sharding: { shardId: identity } } : {}),
      leaderElection: {
        id: required('NESTOR_LEASE_ID'),
        namespace,
        identity,
        ...(leaseDurationMs ? { leaseDurationMs } : {}),
        ...(renewDeadlineMs ? { renewDeadlineMs } : {}),
        ...(retryPeriodMs ? { retryPeriodMs } : {}),
      },
    }),
  ],
  providers: [RecordingController],
})
class AppModule {}

process.on('exit', (code) => emit({ event: 'exit', code }));

const app = await NestFactory.createApplicationContext(AppModule);
// process.exit(0) after a clean shutdown, so the exit code says whether it was clean.
app.enableShutdownHooks([], { useProcessExit: true });
emit({ event: 'ready' });
if (sharded) {
  const informers = app.get(InformerCache);
  const report = () => {
    const size = informers
      .all()
      .filter((informer) => informer.resource.kind === 'ConfigMap')
      .reduce((sum, informer) => sum + informer.size, 0);
    emit({ event: 'cache', size });
  };
  setInterval(report, 500).unref();
}
