import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { Transport, type KubeObject } from '@nestor/core';
import { parallel, TcpRelay, TestEnvironment, waitFor } from '@nestor/testing';
import { EventRecorder } from '../../client/event-recorder.js';
import { ConfigMap } from '../../client/kinds.js';
import { HttpKubeClient } from '../../client/http-kube-client.js';
import { resourceOf } from '../../crd/custom-resource.decorator.js';
import { createConfigMap } from '../../test-support/e2e-helpers.js';
import { WIDGET_CRD, Widget, widget } from '../../test-support/widget.js';
import { Manager } from '../manager/manager.js';
import { ExponentialBackoffRateLimiter } from '../queue/rate-limiter.js';

// The Event recorder and maxRetries against a real API server: what is written (one Event
// for a burst, its series patched, core/v1 as the fallback), that a refused or unreachable
// API server costs Events and never reconcile time, and that a controller gives up on an
// object that always fails until it changes.

interface EventV1 {
  metadata: { name: string };
  reason: string;
  note?: string;
  type: string;
  reportingController: string;
  reportingInstance: string;
  regarding: { kind: string; name: string; uid?: string };
  series?: { count: number; lastObservedTime: string };
}
interface CoreEvent {
  reason: string;
  count?: number;
  involvedObject: { name: string };
  source?: { component?: string };
}

let env: TestEnvironment;
let transport: Transport;
const relays: TcpRelay[] = [];
before(async () => {
  env = await TestEnvironment.start({ crds: [WIDGET_CRD] });
  transport = await Transport.fromKubeConfig(env.kubeConfig);
});
after(async () => {
  transport?.close();
  await Promise.all(relays.map((r) => r.close()));
  await env?.stop();
});

const eventsV1 = async (ns: string, name: string) =>
  (
    await env.client.request<{ items: EventV1[] }>('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events`)
  ).items.filter((e) => e.regarding.name === name);

/** A manager and client on `transport`, Events going through `events` (default: the manager's). */
function operator(events?: EventRecorder) {
  const manager = new Manager({ transport, ...(events ? { events } : {}) });
  const kube = new HttpKubeClient(transport, { informers: manager.informers, events: manager.events });
  return { manager, kube };
}

describe('EventRecorder against a real API server', () => {
  it('makes one Event with series.count 100 of a burst of 100 in a reconcile, and patches it on the next', async () => {
    const ns = await env.createNamespace('events-burst');
    const { manager, kube } = operator();
    const created = await createConfigMap(env.client, ns, 'noisy');
    let runs = 0;
    manager.addController<KubeObject>({
      name: 'noisy-controller',
      resource: ConfigMap,
      namespace: ns,
      reconcile: async ({ object }) => {
        runs++;
        for (let i = 0; i < 100; i++) await kube.recordEvent(object!, 'Warning', 'BackendDown', 'the backend refused');
      },
    });
    await manager.start();
    try {
      const [event] = await waitFor(
        async () => {
          const found = await eventsV1(ns, 'noisy');
          return found.length === 1 && found[0]!.series?.count === 100 && found;
        },
        { what: 'one Event with series.count 100' },
      );
      assert.equal(runs, 1);
      assert.deepEqual(
        {
          type: event!.type,
          reason: event!.reason,
          note: event!.note,
          reportingController: event!.reportingController,
          uid: event!.regarding.uid,
        },
        {
          type: 'Warning',
          reason: 'BackendDown',
          note: 'the backend refused',
          reportingController: 'noisy-controller',
          uid: created.metadata.uid,
        },
      );
      assert.ok(event!.reportingInstance, 'reportingInstance set (POD_NAME, else the host name)');

      // One more, after the Event exists: a PATCH of its series, accepted by the API server.
      const object = manager.getController('noisy-controller')!.informer!.get(`${ns}/noisy`)!;
      // Outside a reconcile: the controller's name is given (in one, it is the default).
      await kube.recordEvent(object, 'Warning', 'BackendDown', 'the backend refused', {
        reportingController: 'noisy-controller',
      });
      await waitFor(async () => (await eventsV1(ns, 'noisy'))[0]?.series?.count === 101, {
        what: 'the series patched to 101',
      });
      assert.equal((await eventsV1(ns, 'noisy')).length, 1);
      assert.deepEqual(
        { created: manager.events.stats.created, patched: manager.events.stats.patched },
        { created: 1, patched: 1 },
      );
    } finally {
      await manager.stop();
    }
  });

  it('writes core/v1 Events with a count where asked to (the fallback when events.k8s.io is not served)', async () => {
    const ns = await env.createNamespace('events-core');
    const cm = await createConfigMap(env.client, ns, 'legacy');
    const object = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'legacy', namespace: ns, uid: cm.metadata.uid },
    };
    const recorder = new EventRecorder(transport, { api: 'v1', reportingController: 'legacy-controller' });
    for (let i = 0; i < 100; i++) recorder.record(object, 'Normal', 'Synced', 'in sync');
    const coreEvents = async () =>
      (
        await env.client.request<{ items: CoreEvent[] }>(
          'GET',
          `/api/v1/namespaces/${ns}/events?fieldSelector=involvedObject.name=legacy`,
        )
      ).items;
    await waitFor(async () => (await coreEvents())[0]?.count === 100, { what: 'a core/v1 Event with count 100' });
    recorder.record(object, 'Normal', 'Synced', 'in sync');
    await waitFor(async () => (await coreEvents())[0]?.count === 101, { what: 'its count patched to 101' });
    const events = await coreEvents();
    assert.equal(events.length, 1);
    assert.equal(events[0]!.source?.component, 'legacy-controller');
    assert.equal(await recorder.close(), true);
  });

  it('does not hold a reconcile when the API server refuses Events (no RBAC for them)', async () => {
    const ns = await env.createNamespace('events-forbidden');
    // The recorder writes as a user with no rights at all: every Event is refused with 403.
    const refused = new KubeConfig();
    const exported = JSON.parse(env.kubeConfig.exportConfig()) as {
      users: Array<{ name: string; user: Record<string, unknown> }>;
    };
    for (const user of exported.users) user.user['as'] = 'nobody-with-rights';
    refused.loadFromString(JSON.stringify(exported));
    const refusedTransport = await Transport.fromKubeConfig(refused);
    const recorder = new EventRecorder(refusedTransport);
    const { manager, kube } = operator(recorder);
    const names = Array.from({ length: 20 }, (_, i) => `cm-${i}`);
    await parallel(names, 8, (name) => createConfigMap(env.client, ns, name));
    const done = new Set<string>();
    let returnedWithWritePending = 0;
    manager.addController<KubeObject>({
      name: 'refused',
      resource: ConfigMap,
      namespace: ns,
      maxConcurrentReconciles: 4,
      reconcile: async ({ object }) => {
        await kube.recordEvent(object!, 'Normal', 'Reconciled', 'done');
        // recordEvent resolved while its write had not even started: the reconcile never waits on it.
        if (recorder.stats.pending > 0) returnedWithWritePending++;
        done.add(object!.metadata!.name!);
      },
    });
    await manager.start();
    try {
      await waitFor(() => done.size === names.length, { what: 'every ConfigMap reconciled' });
      await waitFor(() => recorder.stats.dropped.failed === names.length, { what: 'every Event refused' });
      assert.equal(returnedWithWritePending, names.length);
      assert.equal(recorder.stats.created, 0);
    } finally {
      await manager.stop();
      refusedTransport.close();
    }
  });

  it('does not hold a reconcile when Events go to an API server that stopped answering; stop() drops them within its bound', async () => {
    const ns = await env.createNamespace('events-silent');
    const relay = await TcpRelay.start(env.server);
    relays.push(relay);
    const silentTransport = await Transport.fromKubeConfig(relay.kubeConfig(env.kubeConfig));
    const recorder = new EventRecorder(silentTransport, { api: 'events.k8s.io/v1', requestTimeoutMs: 60_000 });
    relay.partition(); // every connection, open or new: accepted, never answered
    const manager = new Manager({ transport, events: recorder, eventFlushMs: 500 });
    const kube = new HttpKubeClient(transport, { informers: manager.informers, events: recorder });
    const names = Array.from({ length: 30 }, (_, i) => `cm-${i}`);
    await parallel(names, 8, (name) => createConfigMap(env.client, ns, name));
    const done = new Set<string>();
    manager.addController<KubeObject>({
      name: 'silent',
      resource: ConfigMap,
      namespace: ns,
      maxConcurrentReconciles: 4,
      reconcile: async ({ object }) => {
        await kube.recordEvent(object!, 'Normal', 'Reconciled', 'done');
        await kube.recordEvent(object!, 'Normal', 'Checked', 'still done');
        done.add(object!.metadata!.name!);
      },
    });
    await manager.start();
    try {
      await waitFor(() => done.size === names.length, { what: 'every ConfigMap reconciled while no Event is written' });
      assert.equal(recorder.stats.created, 0);
      assert.ok(recorder.stats.pending > 0, 'the Event writes hang behind the silent relay');
    } finally {
      await manager.stop(); // flushes for at most 500 ms, then aborts the writes
      silentTransport.close();
    }
    assert.equal(recorder.stats.pending, 0);
    assert.equal(recorder.stats.created + recorder.stats.dropped.shutdown, names.length * 2);
    assert.equal(recorder.stats.created, 0);
  });
});

describe('maxRetries against a real API server', () => {
  it('stops retrying an object that always fails after N attempts, with a Warning Event, and tries again when its spec changes', async () => {
    const ns = await env.createNamespace('max-retries');
    const path = `/apis/test.nestor.dev/v1/namespaces/${ns}/widgets`;
    await env.client.request('POST', path, widget(ns, 'doomed'));
    const manager = new Manager({ transport });
    const attempts: Array<{ generation: number; attempt: number }> = [];
    const controller = manager.addController<Widget & KubeObject>({
      name: 'doomed-controller',
      resource: resourceOf(Widget),
      namespace: ns,
      maxRetries: 3,
      // Quick retries, so a fourth attempt would come at once if the limit did not hold.
      rateLimiter: new ExponentialBackoffRateLimiter(5, 50),
      reconcile: ({ object, attempt }) => {
        attempts.push({ generation: object!.metadata.generation!, attempt });
        throw new Error('the backend is down');
      },
    });
    await manager.start();
    try {
      const warning = await waitFor(
        async () => (await eventsV1(ns, 'doomed')).find((e) => e.reason === 'RetriesExhausted'),
        { what: 'the RetriesExhausted Warning Event' },
      );
      assert.equal(warning.type, 'Warning');
      assert.equal(warning.reportingController, 'doomed-controller');
      assert.match(warning.note ?? '', /failed 3 times in a row .*not retrying until the object changes/);
      // Given up: nothing queued, delayed or running for it.
      const queue = controller.queue;
      assert.equal(queue.length + queue.delayedCount + queue.processingCount, 0);
      assert.deepEqual(
        attempts.map((a) => a.attempt),
        [1, 2, 3],
      );

      await env.client.request('PATCH', `${path}/doomed`, { spec: { size: 2 } }, 'application/merge-patch+json');
      await waitFor(() => attempts.filter((a) => a.generation === 2).length === 3 && queue.delayedCount === 0, {
        what: 'three attempts at the new generation',
      });
      assert.deepEqual(
        attempts.map((a) => [a.generation, a.attempt]),
        [
          [1, 1],
          [1, 2],
          [1, 3],
          [2, 1],
          [2, 2],
          [2, 3],
        ],
      );
      await waitFor(async () => (await eventsV1(ns, 'doomed')).find((e) => e.series?.count === 2), {
        what: 'the second give-up counted into the same Event',
      });
    } finally {
      await manager.stop();
    }
  });
});
