import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Subject } from 'rxjs';
import { parallel, TestEnvironment, waitFor } from '@nestor/testing';
import { type KubeObject, type ObjectRef, Transport } from '@nestor/core';
import { resourceOf } from '../../crd/custom-resource.decorator.js';
import { ConfigMap } from '../../client/kinds.js';
import { WIDGET_CRD, Widget, widget } from '../../test-support/widget.js';
import { Manager } from '../manager/manager.js';
import { ExponentialBackoffRateLimiter } from '../queue/rate-limiter.js';

const Widgets = resourceOf(Widget);
const widgetsPath = (ns: string, name = '') =>
  `/apis/test.nestor.dev/v1/namespaces/${ns}/widgets${name ? `/${name}` : ''}`;

/** A write that rides out an API server restart: retried until it lands (409 means it already did). */
async function persistently(write: () => Promise<unknown>): Promise<void> {
  await waitFor(
    async () => {
      try {
        await write();
      } catch (error) {
        if ((error as { status?: number }).status !== 409) throw error;
      }
      return true;
    },
    { timeoutMs: 60_000, intervalMs: 200, what: 'a write during the API server restart' },
  );
}

/** Tracks runs per key and fails the test if one key ever runs twice at once. */
class OverlapGuard {
  private readonly inFlight = new Set<string>();
  overlaps = 0;
  enter(key: string): void {
    if (this.inFlight.has(key)) this.overlaps++;
    this.inFlight.add(key);
  }
  leave(key: string): void {
    this.inFlight.delete(key);
  }
}

describe('controller against a real API server, through restarts and compaction', () => {
  let env: TestEnvironment;
  let transport: Transport;
  before(async () => {
    env = await TestEnvironment.start({ useExistingCluster: false, crds: [WIDGET_CRD] });
    transport = await Transport.fromKubeConfig(env.kubeConfig);
  });
  after(async () => {
    transport?.close();
    await env?.stop();
  });

  it('brings 1,000 objects to their desired state while the API server restarts and etcd is compacted', async () => {
    const ns = await env.createNamespace('thousand');
    const names = Array.from({ length: 1000 }, (_, i) => `w-${i}`);
    await parallel(names.slice(0, 500), 16, (name) => env.client.request('POST', widgetsPath(ns), widget(ns, name)));

    const guard = new OverlapGuard();
    const manager = new Manager({ transport, concurrency: 8 });
    const controller = manager.addController<Widget & KubeObject>({
      name: 'status-writer',
      resource: Widgets as never,
      namespace: ns,
      maxConcurrentReconciles: 8,
      reconcile: async ({ key, object }) => {
        guard.enter(key);
        try {
          const generation = object!.metadata.generation;
          if (object!.status?.observedGeneration === generation) return;
          await transport.json('PATCH', `${widgetsPath(ns, object!.metadata.name!)}/status`, {
            body: { status: { observedGeneration: generation } },
            contentType: 'application/merge-patch+json',
          });
        } finally {
          guard.leave(key);
        }
      },
    });
    await manager.start();
    try {
      // More objects arrive, and all of the first half change, while the faults hit.
      const writes = parallel(names.slice(500), 8, (name) =>
        persistently(() => env.client.request('POST', widgetsPath(ns), widget(ns, name))),
      );
      await env.restartApiServer();
      await writes;
      await parallel(names.slice(0, 500), 8, (name) =>
        persistently(() =>
          env.client.request('PATCH', widgetsPath(ns, name), { spec: { size: 2 } }, 'application/merge-patch+json'),
        ),
      );
      const allReconciled = (what: string) =>
        waitFor(
          async () => {
            const list = await env.client.request<{ items: Widget[] }>('GET', widgetsPath(ns));
            const done = list.items.filter((w) => w.status?.observedGeneration === w.metadata.generation).length;
            return list.items.length === 1000 && done === 1000;
          },
          { timeoutMs: 180_000, intervalMs: 500, what },
        );
      await allReconciled('all 1,000 objects to be reconciled after the restart');

      // Compaction restarts the API server too. With no write in flight, the watch resumes
      // from a resourceVersion older than the compaction: 410 Gone, relist.
      const relistsBefore = controller.informer!.stats.relists;
      await env.compactEtcd();
      await parallel(names, 8, (name) =>
        persistently(() =>
          env.client.request('PATCH', widgetsPath(ns, name), { spec: { size: 3 } }, 'application/merge-patch+json'),
        ),
      );
      await allReconciled('all 1,000 objects to be reconciled after the compaction');
      const stats = controller.informer!.stats;
      assert.ok(stats.relists > relistsBefore, `the watch relisted after 410 Gone (relists: ${stats.relists})`);
      assert.ok(stats.restarts >= 2, `the watch reconnected after each restart (restarts: ${stats.restarts})`);
      assert.equal(guard.overlaps, 0, 'no object was reconciled twice at the same time');
    } finally {
      await manager.stop();
    }
  });
});

describe('controller on the shared control plane', () => {
  let env: TestEnvironment;
  let transport: Transport;
  before(async () => {
    env = await TestEnvironment.start({ crds: [WIDGET_CRD] });
    transport = await Transport.fromKubeConfig(env.kubeConfig);
  });
  after(async () => {
    transport?.close();
    await env?.stop();
  });

  it('shares one watch on the wire between two controllers of the same kind', async () => {
    const ns = await env.createNamespace('shared-watch');
    const seen = { a: new Set<string>(), b: new Set<string>() };
    const manager = new Manager({ transport });
    const before = transport.stats.watches;
    for (const which of ['a', 'b'] as const) {
      manager.addController({
        name: `sharing-${which}`,
        resource: ConfigMap,
        namespace: ns,
        reconcile: ({ ref }) => void seen[which].add(ref.name),
      });
    }
    await manager.start();
    try {
      await env.client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'one' } });
      await waitFor(() => seen.a.has('one') && seen.b.has('one'), { what: 'both controllers to reconcile' });
      assert.equal(transport.stats.watches - before, 1, 'one watch request for two controllers');
    } finally {
      await manager.stop();
    }
  });

  it('drives a controller from a poller source with no Kubernetes object behind it', async () => {
    // An "external API": records that change over time, polled into refs.
    const external = new Map<string, number>([
      ['invoice-1', 1],
      ['invoice-2', 1],
    ]);
    const poll = new Subject<ObjectRef[]>();
    const reconciled: Array<{ name: string; version: number }> = [];
    const manager = new Manager({ transport });
    manager.addController({
      name: 'invoices',
      sources: [poll],
      reconcile: ({ ref, object }) => {
        assert.equal(object, undefined);
        reconciled.push({ name: ref.name, version: external.get(ref.name)! });
      },
    });
    await manager.start();
    const timer = setInterval(() => poll.next([...external.keys()].map((name) => ({ name }))), 50);
    try {
      await waitFor(() => reconciled.some((r) => r.name === 'invoice-2'), {
        what: 'the polled records to be reconciled',
      });
      external.set('invoice-1', 2);
      await waitFor(() => reconciled.some((r) => r.name === 'invoice-1' && r.version === 2), {
        what: 'the changed record to be reconciled',
      });
    } finally {
      clearInterval(timer);
      await manager.stop();
    }
  });

  it('backs off a reconciler that always throws, with growing intervals, without blocking other keys', async () => {
    const ns = await env.createNamespace('backoff');
    const attempts: number[] = [];
    const good = new Set<string>();
    const manager = new Manager({ transport, concurrency: 2 });
    manager.addController({
      name: 'failing',
      resource: ConfigMap,
      namespace: ns,
      maxConcurrentReconciles: 2,
      rateLimiter: new ExponentialBackoffRateLimiter(40, 60_000),
      reconcile: ({ ref }) => {
        if (ref.name === 'bad') {
          attempts.push(performance.now());
          throw new Error('always fails');
        }
        good.add(ref.name);
      },
    });
    await manager.start();
    try {
      await env.client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'bad' } });
      await waitFor(() => attempts.length >= 2, { what: 'the first retries' });
      const goodNames = Array.from({ length: 20 }, (_, i) => `good-${i}`);
      await parallel(goodNames, 4, (name) =>
        env.client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name } }),
      );
      await waitFor(() => goodNames.every((n) => good.has(n)), { what: 'the other keys to be reconciled meanwhile' });
      await waitFor(() => attempts.length >= 6, { what: 'six attempts of the failing key', timeoutMs: 60_000 });
      const gaps = attempts.slice(1).map((t, i) => t - attempts[i]!);
      // Backoff 40, 80, 160, 320, 640 ms: each wait is at least the limiter's delay, and they grow.
      gaps.slice(0, 5).forEach((gap, i) => assert.ok(gap >= 40 * 2 ** i * 0.9, `gap ${i} was ${gap.toFixed(0)} ms`));
      assert.ok(gaps[4]! > gaps[1]! * 2, `intervals grow: ${gaps.map((g) => g.toFixed(0)).join(', ')}`);
    } finally {
      await manager.stop();
    }
  });
});
