import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1ConfigMap } from '../../client/kinds.js';
import { Transport, type KubeObject } from '@nestor/core';
import { parallel, TestEnvironment, waitFor, type AuditEvent } from '@nestor/testing';
import { ConfigMap } from '../../client/kinds.js';
import {
  configMapsPath,
  createConfigMap,
  patchConfigMap,
  serviceAccountKubeConfig,
} from '../../test-support/e2e-helpers.js';
import { Manager } from '../manager/manager.js';

// The API server throttles: API Priority and Fairness serves the operator's ConfigMap
// requests one at a time and answers the rest 429 with Retry-After: 1. Before, a throttled
// write failed the reconcile and the workqueue retried it after its per-key backoff (5 ms,
// 10 ms, ...): dozens of requests a second against a server asking for one. Now the
// transport waits as asked and sends again (as client-go), and the workqueue never requeues
// sooner than asked. And once refused, the transport sends the resource's requests one at a
// time (ThrottleWindows) instead of letting every refused request wake into the seat together.

let env: TestEnvironment;
before(async () => {
  env = await TestEnvironment.start({ useExistingCluster: false, auditLog: true });
});
after(() => env?.stop());

/** Microseconds since the epoch of an audit timestamp (RFC 3339 with microseconds). */
function micros(timestamp: string): number {
  const [seconds, fraction = ''] = timestamp.replace(/Z$/, '').split('.');
  return Date.parse(`${seconds}Z`) * 1000 + Number(fraction.padEnd(6, '0').slice(0, 6));
}

describe('an API server that throttles the operator', () => {
  it('is retried no sooner than Retry-After, and every change converges once the limit lifts', async (t) => {
    const namespace = await env.createNamespace('throttle');
    const { kubeConfig, user } = await serviceAccountKubeConfig(env, namespace, 'operator');
    const names = Array.from({ length: 20 }, (_, i) => `cm-${i}`);
    await parallel(names, 8, (name) => createConfigMap(env.client, namespace, name, { data: { v: '1' } }));

    // Workers woken together by 20 changes meet at the level's one seat.
    const workers = 8;
    const transport = await Transport.fromKubeConfig(kubeConfig);
    const manager = new Manager({ transport });
    manager.addController<V1ConfigMap & KubeObject>({
      name: 'throttled',
      resource: ConfigMap,
      namespace,
      maxConcurrentReconciles: workers,
      reconcile: async ({ object, signal }) => {
        await transport.json('PATCH', configMapsPath(namespace, object!.metadata!.name!), {
          body: { metadata: { annotations: { 'nestor.test/observed': object!.data?.['v'] ?? '' } } },
          contentType: 'application/merge-patch+json',
          signal,
        });
      },
    });
    const observed = async (v: string) => {
      const list = await env.client.request<{ items: V1ConfigMap[] }>('GET', configMapsPath(namespace));
      return list.items.filter((cm) => cm.metadata?.annotations?.['nestor.test/observed'] === v).length;
    };
    /** The operator's writes to the ConfigMaps received since `since` (µs), from the audit log. */
    const writesSince = async (since: number) =>
      (await env.auditEvents()).filter(
        (e) =>
          e.user.username === user &&
          e.objectRef?.resource === 'configmaps' &&
          e.objectRef.namespace === namespace &&
          e.verb === 'patch' &&
          micros(e.requestReceivedTimestamp) >= since,
      );
    await manager.start();
    let lift: (() => Promise<void>) | undefined;
    try {
      await waitFor(async () => (await observed('1')) === names.length, {
        timeoutMs: 30_000,
        what: 'the first reconciles',
      });

      lift = await env.throttle({ user }, [{ apiGroup: '', resource: 'configmaps' }]);
      const throttledAt = Date.now() * 1000;
      let v = 2;
      const changeAll = () =>
        parallel(names, 8, (name) => patchConfigMap(env.client, namespace, name, { data: { v: String(v) } }));
      await changeAll();
      const refused = async () => (await writesSince(throttledAt)).filter((e) => e.responseStatus?.code === 429).length;
      // Throttled until the operator has been answered 429. Writes that reach the one seat one
      // after another pass it (HTTP/2 sends them over one connection, as they come): while
      // none has met another there, every object is changed again.
      await waitFor(
        async () => {
          if ((await refused()) > 0) return true;
          v++;
          await changeAll();
          return false;
        },
        { timeoutMs: 60_000, intervalMs: 1_000, what: 'the operator to be answered 429' },
      );
      // Then a few seconds more of changes, every object each second: the workers all have
      // work, and the first refusals were answered Retry-After: 1. Counted from a Retry-After
      // after the first 429 (server clock): requests already on their way when it came were
      // not held by the window it opened (the first crowd, answered at once, whatever the
      // load on this machine), and a crowd of sleepers would wake from then on.
      const first429 = Math.min(
        ...(await writesSince(throttledAt))
          .filter((e) => e.responseStatus?.code === 429)
          .map((e) => micros(e.stageTimestamp)),
      );
      const throttledSeconds = 5;
      const from = first429 + 1_000_000;
      const to = from + throttledSeconds * 1_000_000;
      while (Date.now() * 1000 < to + 250_000) {
        v++;
        await Promise.all([changeAll(), sleep(1_000)]);
      }
      // Once refused, the resource's requests go one at a time, and one more only after the
      // Retry-After: about one 429 a second (a window widened to two meeting the seat), not a
      // crowd of sleepers waking together and refused again (client-go's way: 7 + 6 + ... a
      // round, each round growing the server's Retry-After).
      const laterRefusals = (await writesSince(from))
        .filter((e) => e.responseStatus?.code === 429 && micros(e.requestReceivedTimestamp) < to)
        .map((e) => Math.round((micros(e.requestReceivedTimestamp) - from) / 1000));
      t.diagnostic(`${laterRefusals.length} 429s in the ${throttledSeconds} s counted`);
      assert.ok(
        laterRefusals.length <= throttledSeconds + 2,
        `${laterRefusals.length} writes answered 429 in the ${throttledSeconds} s from a Retry-After after the ` +
          `first refusal, received at ${laterRefusals.sort((a, b) => a - b).join(', ')} ms`,
      );
      assert.ok(transport.stats.held > 0, 'requests waited for the throttled resource’s window');
      await lift();
      lift = undefined;
      const liftedAt = Date.now() * 1000;
      await waitFor(async () => (await observed(String(v))) === names.length, {
        timeoutMs: 60_000,
        intervalMs: 250,
        what: 'every change made while throttled to converge once the limit lifted',
      });

      const writes = await waitFor(
        async () => {
          const events = await writesSince(throttledAt);
          // Every object's last write (the converged one) is in the log.
          const ok = new Set(events.filter((e) => e.responseStatus?.code === 200).map((e) => e.objectRef?.name));
          return names.every((n) => ok.has(n)) ? events : undefined;
        },
        { what: 'the operator’s writes in the audit log' },
      );

      // Each write answered 429 is sent again, or followed by the object's next write, only
      // after the Retry-After (1 s) has passed since the answer.
      const byTarget = new Map<string, AuditEvent[]>();
      for (const e of writes) {
        const target = e.objectRef!.name!;
        byTarget.set(target, [...(byTarget.get(target) ?? []), e]);
      }
      const tooSoon: string[] = [];
      for (const [target, events] of byTarget) {
        // One write at a time per object (a key runs once at a time): the next is the retry.
        events.sort((a, b) => micros(a.requestReceivedTimestamp) - micros(b.requestReceivedTimestamp));
        for (const [i, e] of events.entries()) {
          const next = events[i + 1];
          if (e.responseStatus?.code !== 429 || !next) continue;
          // 2 ms for the timer's rounding.
          const gapMs = (micros(next.requestReceivedTimestamp) - micros(e.stageTimestamp)) / 1000;
          if (gapMs < 1000 - 2) tooSoon.push(`${target}: ${gapMs.toFixed(1)} ms`);
        }
      }
      assert.deepEqual(tooSoon, [], 'no write was sent again sooner than Retry-After');
      assert.ok(transport.stats.throttled > 0, 'the transport waited out 429s');

      // No storm when the limit lifts: a write per object, and its echo's (the reconcile of
      // its own annotation change).
      const afterLift = writes.filter((e) => micros(e.requestReceivedTimestamp) >= liftedAt);
      assert.ok(
        afterLift.length <= 2 * names.length,
        `${afterLift.length} writes after the limit lifted, for ${names.length} objects`,
      );
    } finally {
      await lift?.();
      await manager.stop();
      transport.close();
    }
  });
});
