import 'reflect-metadata';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { INestApplicationContext, LoggerService } from '@nestjs/common';
import type { V1ConfigMap } from '../client/kinds.js';
import { freePort, parallel, TestEnvironment, waitFor } from '@nestor/testing';
import {
  ConfigMap,
  Controller,
  OperatorHttpServer,
  OperatorRegistry,
  Reconcile,
  Transport,
  type ReconcileContext,
  type ReconcileResult,
} from '../index.js';
import { InformerCache } from '../runtime/cache/informer-cache.js';
import { Manager } from '../runtime/manager/manager.js';
import { configMapsPath, createConfigMap, patchConfigMap } from '../test-support/e2e-helpers.js';
import { bootOperatorApp } from '../test-support/operator-app.js';
import { OperatorProcess } from '../test-support/operator-process.js';

// The API server goes away while the operator starts, and while it works. Before: a process
// started during the outage ended itself (its timers were unref'd: exit 13 under top-level
// await), and during an outage every key failed, logged a stack and spent its backoff and
// the shared 10 qps bucket, so recovery of 2,000 objects took minutes.

let env: TestEnvironment;
before(async () => {
  // Its own control plane: these tests stop the API server.
  env = await TestEnvironment.start({ useExistingCluster: false });
});
after(() => env?.stop());

/** Resolves once the API server no longer answers /readyz. */
async function serverDown(): Promise<void> {
  await waitFor(
    async () => {
      try {
        await env.client.raw('GET', '/readyz', undefined, undefined, 500);
        return false;
      } catch {
        return true;
      }
    },
    { timeoutMs: 15_000, what: 'the API server to stop answering' },
  );
}

describe('an operator started while the API server is down', () => {
  it('lists as soon as the server answers again, not when its backoff ends', async () => {
    const namespace = await env.createNamespace('resume');
    const names = Array.from({ length: 20 }, (_, i) => `cm-${i}`);
    await parallel(names, 8, (name) => createConfigMap(env.client, namespace, name));
    const transport = await Transport.fromKubeConfig(env.kubeConfig);
    // A backoff no test would wait for: the LISTs that fail during the outage are retried
    // only because the outage gate's probe finds the server back.
    const informers = new InformerCache(transport, { backoff: { initialMs: 600_000, maxMs: 600_000 } });
    const manager = new Manager({ transport, informers });
    const reconciled = new Set<string>();
    manager.addController({
      name: 'resume',
      resource: ConfigMap,
      namespace,
      reconcile: ({ key }) => void reconciled.add(key),
    });
    const restart = env.restartApiServer({ kill: true, downtimeMs: 4_000 });
    try {
      await serverDown();
      const started = manager.start();
      await waitFor(() => informers.all().some((i) => i.stats.failures > 0), {
        timeoutMs: 15_000,
        what: 'the first LIST to fail while the server is down',
      });
      await restart;
      await started;
      await waitFor(() => names.every((n) => reconciled.has(`${namespace}/${n}`)), {
        timeoutMs: 60_000,
        what: 'every ConfigMap reconciled after the server came back',
      });
    } finally {
      await restart.catch(() => undefined);
      await manager.stop();
      transport.close();
    }
  });

  it('keeps its lease through an outage longer than the renew deadline: no exit, no new identity', async () => {
    const namespace = await env.createNamespace('lapse');
    await createConfigMap(env.client, namespace, 'before');
    const operator = new OperatorProcess({
      kubeconfigPath: env.kubeconfigPath,
      namespace,
      identity: 'rides-it-out',
      leaseId: 'lapse',
      leaseDurationMs: 3_000,
      renewDeadlineMs: 2_000,
      retryPeriodMs: 500,
    });
    try {
      await operator.waitForEvent('the first reconcile', (e) => e.event === 'end' && e.key === `${namespace}/before`);
      // Down for longer than the renew deadline: the lease lapses, nobody else takes it.
      await env.restartApiServer({ kill: true, downtimeMs: 4_000 });
      await waitFor(
        () => operator.output.some((l) => l.includes('the lease lapsed while the API server did not answer')),
        {
          timeoutMs: 30_000,
          what: 'the lease to lapse',
        },
      );
      await patchConfigMap(env.client, namespace, 'before', { data: { key: 'changed' } });
      await createConfigMap(env.client, namespace, 'after', { data: { write: 'yes', v: '1' } });
      await operator.waitForEvent(
        'a reconcile after the outage',
        (e) => e.event === 'end' && e.key === `${namespace}/after`,
      );
      const written = await operator.waitForEvent(
        'a write after the outage',
        (e) => e.event === 'write' && e.key === `${namespace}/after`,
      );
      assert.equal(written.ok, true, operator.tail());
      assert.ok(operator.running, `the operator should still run:\n${operator.tail()}`);
      const lease = await env.client.request<{ spec: { holderIdentity: string } }>(
        'GET',
        `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/lapse`,
      );
      assert.equal(lease.spec.holderIdentity, 'rides-it-out');
    } finally {
      await operator.dispose();
    }
  });

  it('waits for it, then reconciles everything (with the app awaiting its bootstrap at top level)', async () => {
    const namespace = await env.createNamespace('startup');
    const names = Array.from({ length: 20 }, (_, i) => `cm-${i}`);
    await parallel(names, 8, (name) => createConfigMap(env.client, namespace, name));

    const restart = env.restartApiServer({ kill: true, downtimeMs: 6_000 });
    await serverDown();
    const operator = new OperatorProcess({
      kubeconfigPath: env.kubeconfigPath,
      namespace,
      identity: 'starts-in-outage',
      leaseId: 'startup',
    });
    try {
      await restart;
      for (const name of names) {
        await operator.waitForEvent(`${name} reconciled`, (e) => e.event === 'end' && e.key === `${namespace}/${name}`);
      }
      assert.ok(operator.running, 'the operator is still running');
    } finally {
      await operator.dispose();
    }
  });

  it('gives up after the cache sync timeout, exits non-zero and says why', async () => {
    const namespace = await env.createNamespace('giveup');
    const restart = env.restartApiServer({ kill: true, downtimeMs: 8_000 });
    await serverDown();
    const operator = new OperatorProcess({
      kubeconfigPath: env.kubeconfigPath,
      namespace,
      identity: 'gives-up',
      leaseId: 'giveup',
      cacheSyncTimeoutMs: 2_000,
    });
    try {
      const exit = await operator.waitForExit(20_000);
      assert.notEqual(exit.code, 0, operator.tail());
      assert.match(
        operator.tail(),
        /gave up checking the kinds are served after 2000 ms: the API server did not answer/,
      );
    } finally {
      await operator.dispose();
      await restart;
    }
  });
});

/** Reads each ConfigMap from the API server itself (not the cache), so an outage fails it. */
@Controller(ConfigMap, { maxConcurrentReconciles: 4 })
class ReadThroughController {
  readonly runs = new Map<string, number>();
  failures = 0;

  constructor(private readonly transport: Transport) {}

  @Reconcile()
  async reconcile(configMap: V1ConfigMap, ctx: ReconcileContext): Promise<ReconcileResult> {
    const { namespace, name } = configMap.metadata!;
    try {
      await this.transport.json('GET', configMapsPath(namespace!, name!), { signal: ctx.signal });
    } catch (error) {
      this.failures++;
      throw error;
    }
    this.runs.set(name!, (this.runs.get(name!) ?? 0) + 1);
    return { requeueAfter: 300 };
  }
}

class CapturingLogger implements LoggerService {
  readonly lines: string[] = [];
  log = (message: unknown) => this.lines.push(String(message));
  warn = (message: unknown) => this.lines.push(String(message));
  error = (message: unknown) => this.lines.push(String(message));
  debug = () => {};
  verbose = () => {};
}

describe('an outage while the operator works', () => {
  let app: INestApplicationContext;
  let namespace: string;
  const logger = new CapturingLogger();
  const names = Array.from({ length: 60 }, (_, i) => `cm-${i}`);

  before(async () => {
    namespace = await env.createNamespace('outage');
    await parallel(names, 8, (name) => createConfigMap(env.client, namespace, name));
    app = await bootOperatorApp({ kubeConfig: env.kubeConfig, namespace, providers: [ReadThroughController], logger });
  });
  after(() => app?.close());

  it('holds reconciles while the server is down, spends no backoff, and resumes with one log line each way', async () => {
    const controller = app.get(ReadThroughController);
    await waitFor(() => names.every((n) => (controller.runs.get(n) ?? 0) >= 2), {
      timeoutMs: 30_000,
      what: 'every ConfigMap to be reconciled twice before the outage',
    });
    const failuresBefore = controller.failures;
    await env.restartApiServer({ kill: true, downtimeMs: 4_000 });
    const after = new Map(controller.runs);
    await waitFor(() => names.every((n) => (controller.runs.get(n) ?? 0) > after.get(n)!), {
      timeoutMs: 30_000,
      what: 'every ConfigMap to be reconciled again after the outage',
    });

    // Only the reconciles in flight when the server went away failed; the rest were held.
    assert.ok(
      controller.failures - failuresBefore <= 4,
      `${controller.failures - failuresBefore} reconciles failed during the outage; at most the 4 in flight should`,
    );
    const queue = app.get(OperatorRegistry).getController('ReadThroughController')!.queue;
    assert.deepEqual(
      names.filter((n) => queue.numRequeues(`${namespace}/${n}`) > 0),
      [],
      'no object spent backoff on the outage',
    );
    const held = logger.lines.filter((l) => l.includes('holding reconciles until it does'));
    const resumed = logger.lines.filter((l) => l.includes('reconciles resume'));
    assert.equal(held.length, 1, logger.lines.join('\n'));
    assert.equal(resumed.length, 1, logger.lines.join('\n'));
    assert.equal(
      logger.lines.filter((l) => l.includes('reconcile failed') && l.includes('retrying with backoff')).length,
      0,
      'no error line per object',
    );
  });
});

@Controller(ConfigMap)
class QuietController {
  @Reconcile()
  reconcile(): void {}
}

describe('the outage on /readyz and /metrics', () => {
  it('/readyz fails its apiserver check while the server is down (/healthz passes), the gauge is 1; both recover', async () => {
    const namespace = await env.createNamespace('visible');
    await createConfigMap(env.client, namespace, 'cm');
    const app = await bootOperatorApp({
      kubeConfig: env.kubeConfig,
      namespace,
      providers: [QuietController],
      metrics: { port: await freePort(), host: '127.0.0.1', secure: false },
      health: { port: await freePort(), host: '127.0.0.1' },
    });
    const { health, metrics } = app.get(OperatorHttpServer).addresses;
    const get = async (port: number | undefined, path: string) => {
      const response = await fetch(`http://127.0.0.1:${port}${path}`);
      return { status: response.status, body: await response.text() };
    };
    const gauge = async (name: string) =>
      Number(new RegExp(`^${name} (\\S+)$`, 'm').exec((await get(metrics, '/metrics')).body)?.[1]);
    try {
      await waitFor(async () => (await get(health, '/readyz')).status === 200, { what: '/readyz to pass' });
      assert.equal(await gauge('nestor_apiserver_unreachable'), 0);

      const restart = env.restartApiServer({ kill: true, downtimeMs: 6_000 });
      const down = await waitFor(
        async () => {
          const readyz = await get(health, '/readyz?verbose');
          return readyz.status === 503 && /\[-\]apiserver failed/.test(readyz.body) ? readyz : undefined;
        },
        { timeoutMs: 15_000, what: '/readyz to fail its apiserver check' },
      );
      assert.match(down.body, /readyz check failed/);
      assert.equal((await get(health, '/healthz')).status, 200, 'alive while the server is down');
      assert.equal(await gauge('nestor_apiserver_unreachable'), 1);
      await restart;

      let last = '';
      await waitFor(
        async () => {
          const readyz = await get(health, '/readyz?verbose');
          last = readyz.body;
          return readyz.status === 200;
        },
        { timeoutMs: 60_000, what: '/readyz to pass again' },
      ).catch((error: Error) => {
        throw new Error(`${error.message}:\n${last}`);
      });
      assert.equal(await gauge('nestor_apiserver_unreachable'), 0);
      assert.ok((await gauge('nestor_apiserver_outages_total')) >= 1);
    } finally {
      await app.close();
    }
  });
});
