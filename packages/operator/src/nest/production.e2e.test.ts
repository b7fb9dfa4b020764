// Production runtime, in process: /metrics under controller-runtime's names with values
// that move, /readyz before and after the caches sync, and a standby replica that is ready.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CapturingLogger, Test, type TestingModule } from '@nestjs/testing';
import { KubeConfig } from '@kubernetes/client-node';
import type { V1ConfigMap, V1Lease } from '../client/kinds.js';
import { freePort, TestEnvironment, waitFor } from '@nestor/testing';
import {
  ConfigMap,
  Controller,
  KubeClient,
  Manager,
  OperatorModule,
  Reconcile,
  TerminalError,
  WriteOutsideRunError,
  type OperatorModuleOptions,
  type ReconcileContext,
} from '../index.js';
import { createConfigMap } from '../test-support/e2e-helpers.js';
import { parseMetrics, valueOf, type Sample } from '../test-support/prometheus.js';

let env: TestEnvironment;
const apps: TestingModule[] = [];

before(async () => {
  env = await TestEnvironment.start();
});
after(async () => {
  for (const app of apps.splice(0)) await app.close();
  await env.stop();
});

/** Compiles an application with the operator; init() is the caller's (it may be left pending). */
async function compile(options: OperatorModuleOptions, providers: unknown[]): Promise<TestingModule> {
  const app = await Test.createTestingModule({
    imports: [OperatorModule.forRoot({ shutdownGraceMs: 10_000, ...options })],
    providers: providers as never[],
  }).compile();
  apps.push(app);
  return app;
}

async function close(app: TestingModule): Promise<void> {
  apps.splice(apps.indexOf(app), 1);
  await app.close();
}

async function get(port: number, path: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: response.status, body: await response.text() };
}

async function scrape(port: number): Promise<Sample[]> {
  const { status, body } = await get(port, '/metrics');
  assert.equal(status, 200);
  return parseMetrics(body);
}

function leasePath(namespace: string, name = ''): string {
  return `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases${name ? `/${name}` : ''}`;
}

/** MicroTime, as a Lease's times are written. */
const microTime = (date: Date) => date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

/** Reconciles ConfigMaps and behaves as their data.mode says. */
@Controller(ConfigMap, { name: 'production-test', maxConcurrentReconciles: 3, reconcileTimeoutMs: 1000 })
class BehavingController {
  readonly reconciled = new Map<string, number>();

  @Reconcile()
  async reconcile(configMap: V1ConfigMap, ctx: ReconcileContext): Promise<void> {
    this.reconciled.set(ctx.key, (this.reconciled.get(ctx.key) ?? 0) + 1);
    switch (configMap.data?.['mode']) {
      case 'error':
        throw new Error('failing on purpose');
      case 'terminal':
        throw new TerminalError('this can never work');
      case 'panic': {
        const missing = configMap.data['absent'] as unknown as { field: string };
        void missing.field; // TypeError: what a Go panic would be
        return;
      }
      case 'hang':
        // Runs until the reconcile timeout aborts it.
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
        return;
      default:
        return;
    }
  }
}

describe('production runtime in process', () => {
  it('/metrics exposes controller-runtime names whose values move as reconciles happen', async () => {
    const namespace = await env.createNamespace('metrics');
    const controller = 'production-test';
    const queue = { name: controller, controller };
    const leaseId = 'metrics-operator';
    await createConfigMap(env.client, namespace, 'ok-1', { data: { mode: 'ok' } });
    const port = await freePort();
    const app = await compile(
      {
        kubeConfig: env.kubeConfig,
        namespace,
        // Plain HTTP: this test is about the values; metrics-auth.e2e.test.ts covers HTTPS and auth.
        metrics: { port, host: '127.0.0.1', secure: false },
        health: { port: 0 },
        // Default timings: a sole candidate takes the Lease at once.
        leaderElection: { id: leaseId, namespace, identity: 'metrics-test' },
      },
      [BehavingController],
    );
    await app.init();
    const reconciler = app.get(BehavingController);

    const first = await waitFor(
      async () => {
        const samples = await scrape(port);
        return (valueOf(samples, 'controller_runtime_reconcile_total', { controller, result: 'success' }) ?? 0) >= 1
          ? samples
          : undefined;
      },
      { what: 'the first successful reconcile in /metrics' },
    );
    // As controller-runtime and client-go, every series of a controller and its queue exists from the start.
    for (const name of [
      'controller_runtime_reconcile_errors_total',
      'controller_runtime_terminal_reconcile_errors_total',
      'controller_runtime_reconcile_panics_total',
      'controller_runtime_reconcile_timeouts_total',
    ]) {
      assert.equal(valueOf(first, name, { controller }), 0, `${name} before any error`);
    }
    assert.equal(valueOf(first, 'controller_runtime_reconcile_total', { controller, result: 'error' }), 0);
    assert.equal(valueOf(first, 'controller_runtime_max_concurrent_reconciles', { controller }), 3);
    assert.notEqual(valueOf(first, 'controller_runtime_active_workers', { controller }), undefined);
    assert.ok(valueOf(first, 'controller_runtime_reconcile_time_seconds_count', { controller })! >= 1);
    for (const name of [
      'workqueue_depth',
      'workqueue_adds_total',
      'workqueue_retries_total',
      'workqueue_queue_duration_seconds_count',
      'workqueue_work_duration_seconds_count',
      'workqueue_unfinished_work_seconds',
      'workqueue_longest_running_processor_seconds',
    ]) {
      assert.notEqual(valueOf(first, name, queue), undefined, `${name} ${JSON.stringify(queue)}`);
    }
    assert.equal(valueOf(first, 'workqueue_retries_total', queue), 0);
    assert.equal(valueOf(first, 'leader_election_master_status', { name: leaseId }), 1);
    for (const name of ['nestor_watch_restarts', 'nestor_watch_relists', 'nestor_watch_last_event_age_seconds']) {
      assert.notEqual(valueOf(first, name, { resource: 'configmaps' }), undefined, name);
    }

    for (const mode of ['error', 'terminal', 'panic', 'hang', 'ok']) {
      await createConfigMap(env.client, namespace, `${mode}-2`, { data: { mode } });
    }
    // While a reconcile hangs, the in-flight gauges show it.
    const during = await waitFor(
      async () => {
        const samples = await scrape(port);
        const longest = valueOf(samples, 'workqueue_longest_running_processor_seconds', queue) ?? 0;
        const unfinished = valueOf(samples, 'workqueue_unfinished_work_seconds', queue) ?? 0;
        const active = valueOf(samples, 'controller_runtime_active_workers', { controller }) ?? 0;
        return longest > 0.1 && unfinished > 0.1 && active >= 1 ? samples : undefined;
      },
      { what: 'a running reconcile in the in-flight gauges' },
    );
    assert.ok(during);
    const second = await waitFor(
      async () => {
        const samples = await scrape(port);
        const at = (name: string) => valueOf(samples, name, { controller }) ?? 0;
        return at('controller_runtime_reconcile_errors_total') >= 4 &&
          at('controller_runtime_terminal_reconcile_errors_total') >= 1 &&
          at('controller_runtime_reconcile_panics_total') >= 1 &&
          at('controller_runtime_reconcile_timeouts_total') >= 1 &&
          (valueOf(samples, 'controller_runtime_reconcile_total', { controller, result: 'success' }) ?? 0) >= 2
          ? samples
          : undefined;
      },
      { what: 'errors, a terminal error, a panic, a timeout and a second success in /metrics' },
    );
    assert.deepEqual(
      [...reconciler.reconciled.keys()].filter((k) => k.endsWith('-2')).sort(),
      ['error-2', 'hang-2', 'ok-2', 'panic-2', 'terminal-2'].map((n) => `${namespace}/${n}`),
    );

    const moved = (name: string, labels: Record<string, string>) => {
      const before = valueOf(first, name, labels) ?? 0;
      const now = valueOf(second, name, labels) ?? 0;
      assert.ok(now > before, `${name} ${JSON.stringify(labels)} should grow: ${before} -> ${now}`);
    };
    moved('controller_runtime_reconcile_total', { controller, result: 'success' });
    moved('controller_runtime_reconcile_total', { controller, result: 'error' });
    moved('controller_runtime_reconcile_errors_total', { controller });
    moved('controller_runtime_terminal_reconcile_errors_total', { controller });
    moved('controller_runtime_reconcile_panics_total', { controller });
    moved('controller_runtime_reconcile_timeouts_total', { controller });
    moved('controller_runtime_reconcile_time_seconds_count', { controller });
    moved('controller_runtime_reconcile_time_seconds_sum', { controller });
    moved('workqueue_adds_total', queue);
    moved('workqueue_retries_total', queue);
    moved('workqueue_queue_duration_seconds_count', queue);
    moved('workqueue_work_duration_seconds_count', queue);
    // A terminal error is not retried: one reconcile, however long we look.
    assert.equal(reconciler.reconciled.get(`${namespace}/terminal-2`), 1);
    assert.equal(valueOf(second, 'leader_election_master_status', { name: leaseId }), 1);

    await close(app);
    const lease = await env.client.request<V1Lease>('GET', leasePath(namespace, leaseId));
    assert.equal(lease.spec?.holderIdentity ?? '', '', 'the Lease should be released on close');
    await assert.rejects(fetch(`http://127.0.0.1:${port}/metrics`), 'the metrics port should be closed');
  });

  it('/readyz fails until the caches sync (here: until RBAC lets the operator list), /healthz passes meanwhile', async () => {
    const namespace = await env.createNamespace('readyz');
    await createConfigMap(env.client, namespace, 'cm');
    // The operator runs as a service account that may not list ConfigMaps yet.
    await env.client.request('POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'operator' },
    });
    const { status } = await env.client.request<{ status: { token: string } }>(
      'POST',
      `/api/v1/namespaces/${namespace}/serviceaccounts/operator/token`,
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
    );
    const cluster = env.kubeConfig.getCurrentCluster()!;
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'test', server: cluster.server, caData: cluster.caData, skipTLSVerify: false }],
      users: [{ name: 'operator', token: status.token }],
      contexts: [{ name: 'test', cluster: 'test', user: 'operator' }],
      currentContext: 'test',
    });

    const port = await freePort();
    const app = await compile({ kubeConfig, namespace, metrics: { port: 0 }, health: { port, host: '127.0.0.1' } }, [
      BehavingController,
    ]);
    // What the operator logs (until the next compile() puts the testing logger back).
    const logger = new CapturingLogger();
    app.useLogger(logger);
    // Bootstrap waits for the sync, so it stays pending while the probes answer.
    const init = app.init();
    init.catch(() => undefined);

    const notReady = await waitFor(
      async () => {
        const readyz = await get(port, '/readyz');
        return readyz.status === 503 && /\[-\]informer:configmaps failed/.test(readyz.body) ? readyz : undefined;
      },
      { what: '/readyz to fail on the forbidden list' },
    );
    assert.match(notReady.body, /readyz check failed/);
    // Why goes to the log, not to the unauthenticated probe port; once per reason.
    const reasons = () =>
      logger.filter({ level: 'warn', context: 'OperatorHttp', message: /^readyz: informer:configmaps failed:/ });
    // A reason is logged when a probe finds it changed: probe until the forbidden list is the reason
    // (under load, the first failing probe can come before the list's answer).
    await waitFor(
      async () => {
        await get(port, '/readyz');
        return reasons().some((entry) => /forbidden/i.test(String(entry.message)));
      },
      { what: 'the reason in the log' },
    );
    const logLines = reasons().length;
    for (let i = 0; i < 5; i++) {
      const readyz = await get(port, '/readyz');
      assert.equal(readyz.status, 503);
      assert.doesNotMatch(readyz.body, /forbidden|system:serviceaccount|configmaps is/i);
    }
    assert.equal(reasons().length, logLines, 'an unchanged reason is not logged again on every probe');
    assert.equal((await get(port, '/healthz')).status, 200, 'a starting operator is alive');
    assert.equal(app.get(BehavingController).reconciled.size, 0);

    await env.client.request('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/roles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'operator' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }],
    });
    await env.client.request('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'operator' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'operator' },
      subjects: [{ kind: 'ServiceAccount', name: 'operator', namespace }],
    });

    const ready = await waitFor(
      async () => {
        const readyz = await get(port, '/readyz?verbose');
        return readyz.status === 200 ? readyz : undefined;
      },
      { timeoutMs: 60_000, what: '/readyz to pass once the operator may list' },
    );
    assert.match(ready.body, /\[\+\]informer:configmaps ok/);
    await init;
    await waitFor(() => app.get(BehavingController).reconciled.get(`${namespace}/cm`), {
      what: 'the reconcile once synced',
    });
    await close(app);
  });

  it('takes its ports and leader election from the deployment’s environment, without code', async () => {
    const namespace = await env.createNamespace('from-env');
    await createConfigMap(env.client, namespace, 'cm');
    const [metricsPort, healthPort] = [await freePort(), await freePort()];
    const variables = {
      METRICS_BIND_ADDRESS: `127.0.0.1:${metricsPort}`,
      METRICS_SECURE: 'false',
      HEALTH_PROBE_BIND_ADDRESS: `127.0.0.1:${healthPort}`,
      LEADER_ELECT: 'true',
      LEADER_ELECTION_ID: 'from-env-operator',
      LEADER_ELECTION_NAMESPACE: namespace,
    };
    Object.assign(process.env, variables);
    try {
      const app = await compile({ kubeConfig: env.kubeConfig, namespace }, [BehavingController]);
      await app.init();
      await waitFor(() => app.get(BehavingController).reconciled.get(`${namespace}/cm`), {
        what: 'the reconcile once leading',
      });
      assert.equal((await get(healthPort, '/readyz')).status, 200);
      assert.equal(
        valueOf(await scrape(metricsPort), 'leader_election_master_status', { name: 'from-env-operator' }),
        1,
      );
      const lease = await env.client.request<V1Lease>('GET', leasePath(namespace, 'from-env-operator'));
      assert.ok(lease.spec?.holderIdentity, 'the Lease named by LEADER_ELECTION_ID should be held');
      await close(app);
    } finally {
      for (const name of Object.keys(variables)) delete process.env[name];
    }
  });

  it('a standby replica is ready, reconciles nothing, and leads once the Lease is free', async () => {
    const namespace = await env.createNamespace('standby');
    const leaseId = 'standby-operator';
    await createConfigMap(env.client, namespace, 'cm');
    const now = microTime(new Date());
    await env.client.request('POST', leasePath(namespace), {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: leaseId },
      spec: { holderIdentity: 'another-replica', leaseDurationSeconds: 3600, acquireTime: now, renewTime: now },
    });
    const [metricsPort, healthPort] = [await freePort(), await freePort()];
    const app = await compile(
      {
        kubeConfig: env.kubeConfig,
        namespace,
        metrics: { port: metricsPort, host: '127.0.0.1', secure: false },
        health: { port: healthPort, host: '127.0.0.1' },
        leaderElection: {
          id: leaseId,
          namespace,
          identity: 'standby',
          leaseDurationMs: 4000,
          renewDeadlineMs: 3000,
          retryPeriodMs: 500,
        },
      },
      [BehavingController],
    );
    // A standby's application bootstraps completely: it does not wait for the lease.
    await app.init();
    const readyz = await waitFor(
      async () => {
        const response = await get(healthPort, '/readyz?verbose');
        return response.status === 200 ? response : undefined;
      },
      { what: 'the standby to be ready' },
    );
    assert.match(readyz.body, /\[\+\]informer:configmaps ok/);
    assert.equal(valueOf(await scrape(metricsPort), 'leader_election_master_status', { name: leaseId }), 0);
    assert.equal(app.get(Manager).isLeader, false);
    assert.equal(app.get(BehavingController).reconciled.size, 0, 'a standby must not reconcile');

    // The other replica releases the Lease, as a clean shutdown does.
    const lease = await env.client.request<V1Lease>('GET', leasePath(namespace, leaseId));
    await env.client.request('PUT', leasePath(namespace, leaseId), {
      ...lease,
      spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime(new Date()) },
    });
    await waitFor(() => app.get(BehavingController).reconciled.get(`${namespace}/cm`), {
      what: 'the reconcile once leading',
    });
    assert.equal(valueOf(await scrape(metricsPort), 'leader_election_master_status', { name: leaseId }), 1);
    const held = await env.client.request<V1Lease>('GET', leasePath(namespace, leaseId));
    assert.equal(held.spec?.holderIdentity, 'standby');
    assert.equal((await get(healthPort, '/readyz')).status, 200);

    await close(app);
    const released = await env.client.request<V1Lease>('GET', leasePath(namespace, leaseId));
    assert.equal(released.spec?.holderIdentity ?? '', '', 'the Lease should be released on close');
  });

  it("with onLost: 'stop', losing the Lease stands by (no writes), campaigns again and leads when the Lease is free", async () => {
    const namespace = await env.createNamespace('lost');
    const leaseId = 'lost-operator';
    const metricsPort = await freePort();
    const app = await compile(
      {
        kubeConfig: env.kubeConfig,
        namespace,
        metrics: { port: metricsPort, host: '127.0.0.1', secure: false },
        health: { port: 0 },
        leaderElection: {
          id: leaseId,
          namespace,
          identity: 'loser',
          leaseDurationMs: 4000,
          renewDeadlineMs: 3000,
          retryPeriodMs: 200,
          onLost: 'stop',
        },
      },
      [BehavingController],
    );
    await app.init();
    const manager = app.get(Manager);
    const kube = app.get(KubeClient);
    assert.equal(kube, manager.client, "the injected KubeClient is the manager's, fenced by its Lease");
    await waitFor(() => manager.isLeader, { what: 'the lead' });
    await createConfigMap(env.client, namespace, 'before');
    await waitFor(() => app.get(BehavingController).reconciled.has(`${namespace}/before`), { what: 'a reconcile' });
    // Another replica takes the Lease over (as after a partition): the next renewal sees it.
    const usurped = await env.client.request<V1Lease>('GET', leasePath(namespace, leaseId));
    await env.client.request('PUT', leasePath(namespace, leaseId), {
      ...usurped,
      spec: { ...usurped.spec, holderIdentity: 'usurper', renewTime: microTime(new Date()) },
    });
    await waitFor(() => !manager.isLeader, { what: 'the lead to be lost' });
    await waitFor(
      async () => valueOf(await scrape(metricsPort), 'leader_election_master_status', { name: leaseId }) === 0,
      { what: 'leader_election_master_status to drop to 0' },
    );
    // A standby: ready (warm caches), says so, and its KubeClient writes nothing.
    const standby = manager.health();
    assert.equal(standby.ready, true);
    assert.equal(standby.checks.find((c) => c.name === 'manager')?.detail, 'standby');
    // Outside any reconcile it cannot tell whose write it is: refused with what to do instead.
    await assert.rejects(
      kube.patch(ConfigMap, { namespace, name: 'before' }, { data: { from: 'standby' } }),
      WriteOutsideRunError,
    );
    // Said explicitly (a write of no controller): fenced by the Lease, lost.
    await assert.rejects(
      kube.scoped({}).patch(ConfigMap, { namespace, name: 'before' }, { data: { from: 'standby' } }),
      /does not hold the lease .* this write is refused/,
    );
    await createConfigMap(env.client, namespace, 'while-standby');
    // The usurper never renews: once its lease expires this replica takes it back and reconciles.
    await waitFor(() => manager.isLeader, { timeoutMs: 20_000, what: 'the lead to be won back' });
    await waitFor(() => app.get(BehavingController).reconciled.has(`${namespace}/while-standby`), {
      timeoutMs: 20_000,
      what: 'the object created during the standby to be reconciled once leading again',
    });
    assert.equal(manager.health().checks.find((c) => c.name === 'manager')?.detail, 'leading');
    await close(app);
  });
});
