// Production runtime, across processes: operator replicas (test-support/lease-operator.js)
// competing for one Lease on the real control plane, stopped cleanly and killed.
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { V1Lease } from '../client/kinds.js';
import { KubeApiError } from '@nestor/core';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { configMapsPath, createConfigMap } from '../test-support/e2e-helpers.js';
import type { OperatorEvent } from '../test-support/lease-operator.js';
import { OperatorProcess, type OperatorProcessOptions } from '../test-support/operator-process.js';
import { overlappingReconciles, reconcileIntervals } from '../test-support/reconcile-intervals.js';

// Shorter than the defaults (15 s / 10 s / 2 s, covered by the unit tests) to keep the run short.
const LEASE_MS = 4_000;
const RENEW_MS = 3_000;
const RETRY_MS = 1_000;
/** Room for a loaded machine on top of what the protocol itself allows. */
const SLACK_MS = 3_000;

let env: TestEnvironment;
const processes: OperatorProcess[] = [];

before(async () => {
  env = await TestEnvironment.start();
});
after(async () => {
  await Promise.all(processes.map((p) => p.dispose()));
  await env.stop();
});

function replica(options: Omit<OperatorProcessOptions, 'kubeconfigPath'>): OperatorProcess {
  const child = new OperatorProcess({
    kubeconfigPath: env.kubeconfigPath,
    leaseDurationMs: LEASE_MS,
    renewDeadlineMs: RENEW_MS,
    retryPeriodMs: RETRY_MS,
    ...options,
  });
  processes.push(child);
  return child;
}

async function readLease(namespace: string, name: string): Promise<V1Lease | undefined> {
  try {
    return await env.client.request<V1Lease>(
      'GET',
      `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${name}`,
    );
  } catch (error) {
    if (error instanceof KubeApiError && error.status === 404) return undefined;
    throw error;
  }
}

/** Waits until `identity` holds the Lease; returns the Lease. */
function leaseHeldBy(namespace: string, name: string, identity: string, timeoutMs = 30_000): Promise<V1Lease> {
  return waitFor(
    async () => {
      const lease = await readLease(namespace, name);
      return lease?.spec?.holderIdentity === identity ? lease : undefined;
    },
    { timeoutMs, intervalMs: 20, what: `the Lease ${namespace}/${name} to be held by ${identity}` },
  );
}

/** The acquireTime the API server stored, in ms since the epoch. */
function acquiredAt(lease: V1Lease): number {
  return new Date(String(lease.spec?.acquireTime)).getTime();
}

function touch(namespace: string, name: string, data: Record<string, string>): Promise<unknown> {
  return env.client.request('PATCH', configMapsPath(namespace, name), { data }, 'application/merge-patch+json');
}

/** Keeps changing the ConfigMaps (so reconciles are running whenever the lead changes) until stopped. */
function churn(namespace: string, names: string[]): { stop: () => Promise<void> } {
  let stopped = false;
  const loop = (async () => {
    for (let tick = 0; !stopped; tick++) {
      await touch(namespace, names[tick % names.length]!, { tick: String(tick) }).catch(() => undefined);
      await delay(50);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

const keysOf = (events: OperatorEvent[]) => new Set(events.map((e) => e.key));

describe('operator replicas on one Lease', () => {
  it('one replica reconciles; a clean stop hands over at once, a crash once the lease expires; never two at once', async (t) => {
    const namespace = await env.createNamespace('replicas');
    const leaseId = 'replicas-operator';
    const names = ['cm-0', 'cm-1', 'cm-2', 'cm-3', 'cm-4'];
    const keys = names.map((n) => `${namespace}/${n}`);
    for (const name of names) await createConfigMap(env.client, namespace, name, { data: { sleepMs: '150' } });

    const a = replica({ namespace, identity: 'replica-a', leaseId });
    await leaseHeldBy(namespace, leaseId, 'replica-a');
    const b = replica({ namespace, identity: 'replica-b', leaseId });
    await a.waitForEvent('ready', (e) => e.event === 'ready');
    // A standby's application finishes bootstrapping too (its HTTP server and probes run).
    await b.waitForEvent('ready', (e) => e.event === 'ready');
    for (const key of keys)
      await a.waitForEvent(`the first reconcile of ${key}`, (e) => e.event === 'end' && e.key === key);
    for (const name of names) await touch(namespace, name, { round: '1' });
    for (const key of keys) {
      await waitFor(() => a.of('end', key).length >= 2, { what: `replica-a to reconcile ${key} again` });
    }
    assert.deepEqual(b.of('start'), [], 'the standby must not reconcile');
    assert.equal((await readLease(namespace, leaseId))?.spec?.holderIdentity, 'replica-a');

    const load = churn(namespace, names);
    let c: OperatorProcess;
    try {
      // Clean stop: the leader drains, releases the Lease, exits 0; the standby takes over at once.
      const terminatedAt = Date.now();
      a.signal('SIGTERM');
      const aExit = await a.waitForExit();
      assert.equal(aExit.code, 0, `replica-a should exit 0 on SIGTERM:\n${a.tail()}`);
      const afterExit = await readLease(namespace, leaseId);
      assert.ok(
        ['', 'replica-b'].includes(afterExit?.spec?.holderIdentity ?? ''),
        `the Lease should be released on exit, found holder ${afterExit?.spec?.holderIdentity}`,
      );
      const bLease = await leaseHeldBy(namespace, leaseId, 'replica-b');
      const cleanHandover = acquiredAt(bLease) - aExit.at;
      t.diagnostic(
        `clean handover: SIGTERM -> exit ${aExit.at - terminatedAt} ms, exit -> standby acquired ${cleanHandover} ms`,
      );
      assert.ok(
        cleanHandover <= 2.2 * RETRY_MS + SLACK_MS,
        `the standby should take a released lease on its next try, took ${cleanHandover} ms`,
      );
      await b.waitForEvent('its first reconcile', (e) => e.event === 'end');
      const aLastEnd = Math.max(...a.of('end').map((e) => e.end!));
      const bFirstStart = Math.min(...b.of('start').map((e) => e.at));
      assert.ok(bFirstStart >= aLastEnd, 'replica-b started reconciling before replica-a finished its last reconcile');

      // Crash: the leader is SIGKILLed; a new standby takes over once the lease expires.
      c = replica({ namespace, identity: 'replica-c', leaseId });
      await c.waitForEvent('ready', (e) => e.event === 'ready');
      assert.deepEqual(c.of('start'), [], 'the standby must not reconcile');
      const killedAt = Date.now();
      b.signal('SIGKILL');
      await b.waitForExit();
      const cLease = await leaseHeldBy(namespace, leaseId, 'replica-c', LEASE_MS + 3 * RETRY_MS + 30_000);
      const crashHandover = acquiredAt(cLease) - killedAt;
      t.diagnostic(
        `crash handover: SIGKILL -> standby acquired ${crashHandover} ms (lease ${LEASE_MS} ms, retry ${RETRY_MS} ms)`,
      );
      assert.ok(
        crashHandover <= LEASE_MS + 2.2 * RETRY_MS + SLACK_MS,
        `the standby should take an expired lease within leaseDuration + retry, took ${crashHandover} ms`,
      );
      assert.ok(
        crashHandover >= LEASE_MS - 2 * RETRY_MS,
        `the standby took the lease ${crashHandover} ms after the leader died: before it could have expired`,
      );
      for (const key of keys) await c.waitForEvent(`a reconcile of ${key}`, (e) => e.event === 'end' && e.key === key);
    } finally {
      await load.stop();
    }

    // Every object reconciled by every leader, and no two replicas ever reconciled one object at once.
    assert.deepEqual(keysOf(c.of('end')), new Set(keys));
    const runs = await reconcileIntervals([a, b, c]);
    assert.deepEqual(overlappingReconciles(runs), [], 'two replicas reconciled the same object at the same time');
    t.diagnostic(`${runs.length} reconciles checked for overlap`);

    c.signal('SIGTERM');
    assert.equal((await c.waitForExit()).code, 0, `replica-c should exit 0 on SIGTERM:\n${c.tail()}`);
    assert.equal((await readLease(namespace, leaseId))?.spec?.holderIdentity ?? '', '', 'the Lease should be released');
  });

  it('SIGTERM during a long reconcile: the reconcile completes, the process exits 0 and the Lease is released', async (t) => {
    const namespace = await env.createNamespace('drain');
    const leaseId = 'drain-operator';
    const d = replica({ namespace, identity: 'replica-d', leaseId });
    await d.waitForEvent('ready', (e) => e.event === 'ready');
    await leaseHeldBy(namespace, leaseId, 'replica-d');
    await createConfigMap(env.client, namespace, 'slow', { data: { sleepMs: '3000' } });
    const key = `${namespace}/slow`;
    const started = await d.waitForEvent('the slow reconcile to start', (e) => e.event === 'start' && e.key === key);

    const terminatedAt = Date.now();
    d.signal('SIGTERM');
    const exit = await d.waitForExit();
    const lease = await readLease(namespace, leaseId);

    assert.equal(exit.code, 0, `it should exit 0:\n${d.tail()}`);
    const [end] = d.of('end', key);
    assert.ok(end, `the running reconcile should complete before the exit:\n${d.tail()}`);
    assert.ok(terminatedAt < end.end!, 'SIGTERM should arrive while the reconcile runs');
    // Its 3 s sleep ran out (a timer may fire a millisecond early against Date.now()).
    assert.ok(
      end.end! - started.at >= 2_990,
      `the reconcile should run to its end, not be cut short: it ran ${end.end! - started.at} ms`,
    );
    assert.ok(d.of('exit')[0]!.at >= end.end!, 'the process should exit after the reconcile ended');
    assert.equal(lease?.spec?.holderIdentity ?? '', '', `the Lease should be released at exit:\n${d.tail()}`);
    t.diagnostic(
      `SIGTERM -> exit ${exit.at - terminatedAt} ms (the reconcile had ${3000 - (terminatedAt - started.at)} ms left)`,
    );
  });

  it('a replica that loses its Lease exits 1 (the default onLost)', async () => {
    const namespace = await env.createNamespace('lost');
    const leaseId = 'lost-operator';
    const e = replica({ namespace, identity: 'replica-e', leaseId });
    await e.waitForEvent('ready', (event) => event.event === 'ready');
    await leaseHeldBy(namespace, leaseId, 'replica-e');
    // Another replica takes the Lease over (as after a partition): the next renewal sees it.
    await waitFor(
      async () => {
        const lease = (await readLease(namespace, leaseId))!;
        await env.client.request('PUT', `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${leaseId}`, {
          ...lease,
          spec: { ...lease.spec, holderIdentity: 'usurper', renewTime: new Date().toISOString().replace('Z', '000Z') },
        });
        return true;
      },
      { what: 'the Lease to be taken over' },
    );
    const exit = await e.waitForExit();
    assert.equal(exit.code, 1, e.tail());
    assert.match(e.tail(), /lost the lease/);
    assert.equal((await readLease(namespace, leaseId))?.spec?.holderIdentity, 'usurper');
  });

  it('a leader frozen past its lease writes nothing once it thaws: its writes are fenced', async () => {
    const namespace = await env.createNamespace('fenced');
    const leaseId = 'fenced-operator';
    const a = replica({ namespace, identity: 'replica-f', leaseId });
    await leaseHeldBy(namespace, leaseId, 'replica-f');
    await a.waitForEvent('ready', (e) => e.event === 'ready');
    const b = replica({ namespace, identity: 'replica-g', leaseId });
    await b.waitForEvent('ready', (e) => e.event === 'ready');
    // A reconcile that sleeps, then writes: frozen while it sleeps.
    await createConfigMap(env.client, namespace, 'slow', { data: { sleepMs: '2000', write: 'yes' } });
    await a.waitForEvent('the slow reconcile to start', (e) => e.event === 'start' && e.key === `${namespace}/slow`);
    a.signal('SIGSTOP');
    const frozenAt = Date.now();
    try {
      // The standby takes the lease once it expires; then the old leader thaws.
      const taken = await leaseHeldBy(namespace, leaseId, 'replica-g', LEASE_MS * 3 + SLACK_MS);
      assert.ok(acquiredAt(taken) >= frozenAt - 1000);
    } finally {
      a.signal('SIGCONT');
    }
    // The new leader reconciles the object and writes; the old one's write is refused.
    await b.waitForEvent('the new leader to write', (e) => e.event === 'write' && e.ok === true, 30_000);
    const refused = await a.waitForEvent('the thawed leader to try its write', (e) => e.event === 'write', 30_000);
    assert.equal(refused.ok, false, `the thawed leader's write went through: ${a.tail()}`);
    assert.match(refused.error ?? '', /refused/);
    assert.deepEqual(
      a.of('write').filter((e) => e.ok),
      [],
      'no write from the old leader',
    );
    const exit = await a.waitForExit();
    assert.equal(exit.code, 1, a.tail());
    const written = await env.client.request<{ metadata: { annotations?: Record<string, string> } }>(
      'GET',
      configMapsPath(namespace, 'slow'),
    );
    assert.equal(written.metadata.annotations?.['nestor.test/written-by'], 'replica-g');
  });
});
