import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeApiError, ManualClock, type KubeObject, type RequestOptions } from '@nestor/core';
import { qualifiedName } from './event-fields.js';
import { EventRecorder, type EventDropReason } from './event-recorder.js';
import { inRun } from '../test-support/in-run.js';
import { eventName } from './event-sink.js';

interface Sent {
  method: string;
  path: string;
  body: Record<string, unknown>;
}

/** A transport that answers the recorder's requests from memory; `fail` decides refusals. */
function fakeApi(
  options: { eventsV1?: boolean; fail?: (sent: Sent) => KubeApiError | undefined; hang?: boolean } = {},
) {
  const sent: Sent[] = [];
  const hanging: Array<() => void> = [];
  const transport = {
    async json<T>(method: string, path: string, request: RequestOptions = {}): Promise<T> {
      if (method === 'GET') {
        if (options.eventsV1 === false) throw new KubeApiError(404, 'NotFound', 'not served', method, path);
        return { resources: [{ name: 'events' }] } as T;
      }
      const entry = { method, path, body: request.body as Record<string, unknown> };
      sent.push(entry);
      if (options.hang) {
        await new Promise<void>((resolve, reject) => {
          hanging.push(resolve);
          request.signal?.addEventListener('abort', () => reject(request.signal!.reason as Error));
        });
      }
      const refusal = options.fail?.(entry);
      if (refusal) throw refusal;
      return {} as T;
    },
  };
  return { transport, sent, hanging };
}

const pod = (name = 'web-1', uid = 'u-1'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns', uid, resourceVersion: '7' },
});

/** Lets the recorder's scheduled writes and their promises run. */
async function settle(rounds = 5) {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

const T0 = Date.UTC(2024, 0, 1);

describe('EventRecorder', () => {
  it('asks a fence without of() for every Event, whichever controller recorded it', async () => {
    const { transport, sent } = fakeApi();
    let held = true;
    const fence = {
      assertWritable: () => {
        if (!held) throw new Error('the Lease may have expired');
      },
    };
    const recorder = new EventRecorder(transport, { clock: new ManualClock(T0), fence });
    inRun('audit', () => recorder.record(pod('a'), 'Normal', 'Audited', 'seen'));
    await settle();
    held = false;
    // Written by the pump, outside either run: the fence applies to every write alike.
    inRun('shards', () => recorder.record(pod('b'), 'Normal', 'Scaled', 'scaled'));
    await settle();
    assert.deepEqual(
      sent.map((s) => (s.body['regarding'] as { name: string }).name),
      ['a'],
    );
    assert.equal(recorder.stats.dropped.fenced, 1);
  });

  it("asks a fence with of() for the recording controller's fence by name, the one given explicitly first", async () => {
    const { transport, sent } = fakeApi();
    const asked: Array<string | undefined> = [];
    const fence = {
      assertWritable: () => assert.fail('the recorder must ask of(controller), not the ambient fence'),
      of: (controller: string | undefined) => {
        asked.push(controller);
        return {
          assertWritable: () => {
            if (controller === 'audit') throw new Error('the leader Lease may have expired');
          },
        };
      },
    };
    const recorder = new EventRecorder(transport, { clock: new ManualClock(T0), fence });
    recorder.record(pod('a'), 'Normal', 'Audited', 'seen', { controller: 'audit' });
    inRun('audit', () => recorder.record(pod('b'), 'Normal', 'Scaled', 'scaled', { controller: 'shards' }));
    recorder.record(pod('c'), 'Normal', 'Seen', 'outside any controller');
    await settle();
    assert.deepEqual(asked, ['audit', 'shards', undefined]);
    assert.deepEqual(
      sent.map((s) => [(s.body['regarding'] as { name: string }).name, s.body['reportingController']]),
      [
        ['b', 'shards'],
        ['c', 'nestor'],
      ],
    );
    assert.equal(recorder.stats.dropped.fenced, 1);
  });

  it('writes an events.k8s.io/v1 Event with reporting controller and instance, without waiting', async () => {
    const { transport, sent } = fakeApi();
    const clock = new ManualClock(T0);
    const recorder = new EventRecorder(transport, { clock, reportingInstance: 'operator-7d9f-abcde' });
    recorder.record(pod(), 'Normal', 'Scaled', 'scaled to 3', { action: 'Scale' });
    assert.equal(sent.length, 0, 'record() returns before any request');
    await settle();
    assert.equal(sent.length, 1);
    const [{ method, path, body }] = sent as [Sent];
    assert.equal(method, 'POST');
    assert.equal(path, '/apis/events.k8s.io/v1/namespaces/ns/events');
    assert.deepEqual(
      { ...body, metadata: undefined },
      {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: undefined,
        eventTime: '2024-01-01T00:00:00.000000Z',
        reportingController: 'nestor',
        reportingInstance: 'operator-7d9f-abcde',
        action: 'Scale',
        reason: 'Scaled',
        regarding: { apiVersion: 'v1', kind: 'Pod', name: 'web-1', namespace: 'ns', uid: 'u-1', resourceVersion: '7' },
        note: 'scaled to 3',
        type: 'Normal',
      },
    );
    assert.match((body.metadata as { name: string }).name, /^web-1\.[0-9a-f]+$/);
  });

  it('counts a burst of repeats into one Event, then patches its series', async () => {
    const { transport, sent } = fakeApi();
    const clock = new ManualClock(T0);
    const recorder = new EventRecorder(transport, { clock });
    for (let i = 0; i < 100; i++) recorder.record(pod(), 'Warning', 'Failed', 'connection refused');
    await settle();
    assert.equal(sent.length, 1, 'one write for the burst');
    assert.deepEqual(sent[0]!.body.series, { count: 100, lastObservedTime: '2024-01-01T00:00:00.000000Z' });

    clock.advance(1000);
    recorder.record(pod(), 'Warning', 'Failed', 'connection refused');
    await settle();
    assert.equal(sent.length, 2);
    const name = (sent[0]!.body.metadata as { name: string }).name;
    assert.deepEqual(sent[1], {
      method: 'PATCH',
      path: `/apis/events.k8s.io/v1/namespaces/ns/events/${name}`,
      body: { series: { count: 101, lastObservedTime: '2024-01-01T00:00:01.000000Z' } },
    });
    assert.deepEqual(recorder.stats, {
      recorded: 101,
      aggregated: 100,
      created: 1,
      patched: 1,
      dropped: { 'queue-full': 0, 'rate-limited': 0, failed: 0, fenced: 0, shutdown: 0, invalid: 0 },
      pending: 0,
    });
  });

  it('keeps apart what differs in object, type, reason, action or note, and starts anew after the window', async () => {
    const { transport, sent } = fakeApi();
    const clock = new ManualClock(T0);
    const recorder = new EventRecorder(transport, { clock, aggregationWindowMs: 60_000 });
    recorder.record(pod(), 'Normal', 'Synced', 'ok');
    recorder.record(pod('web-2', 'u-2'), 'Normal', 'Synced', 'ok');
    recorder.record(pod(), 'Warning', 'Synced', 'ok');
    recorder.record(pod(), 'Normal', 'Other', 'ok');
    recorder.record(pod(), 'Normal', 'Synced', 'ok', { action: 'Update' });
    recorder.record(pod(), 'Normal', 'Synced', 'not ok');
    await settle();
    assert.equal(sent.filter((s) => s.method === 'POST').length, 6);

    clock.advance(60_001);
    recorder.record(pod(), 'Normal', 'Synced', 'ok');
    await settle();
    assert.equal(sent.at(-1)!.method, 'POST', 'a quiet window later: a new Event, not a patch');
  });

  it("rate limits writes per object (client-go's spam filter): new Events dropped, repeats wait for a token", async () => {
    const { transport, sent } = fakeApi();
    const clock = new ManualClock(T0);
    const recorder = new EventRecorder(transport, { clock, burst: 3, perObjectQps: 1 / 60 });
    for (let i = 0; i < 5; i++) recorder.record(pod(), 'Normal', `Reason${i}`, 'distinct');
    recorder.record(pod('other', 'u-9'), 'Normal', 'Reason0', 'another object has its own bucket');
    await settle();
    assert.equal(sent.length, 4);
    assert.equal(recorder.stats.dropped['rate-limited'], 2);

    // A repeat of a written Event with no token left: kept, and patched when a token comes.
    recorder.record(pod(), 'Normal', 'Reason0', 'distinct');
    recorder.record(pod(), 'Normal', 'Reason0', 'distinct');
    await settle();
    assert.equal(sent.length, 4);
    assert.equal(recorder.stats.pending, 1);
    clock.advance(60_000);
    await settle();
    assert.equal(sent.length, 5);
    assert.deepEqual(sent[4]!.body.series, { count: 3, lastObservedTime: '2024-01-01T00:00:00.000000Z' });
  });

  it('drops and counts past a full queue instead of growing', async () => {
    const { transport, sent, hanging } = fakeApi({ hang: true });
    const drops: EventDropReason[] = [];
    const recorder = new EventRecorder(transport, {
      maxQueue: 10,
      concurrency: 2,
      metrics: { written: () => {}, dropped: (reason) => drops.push(reason) },
    });
    for (let i = 0; i < 50; i++) recorder.record(pod(`p-${i}`, `u-${i}`), 'Normal', 'Made', 'x');
    await settle();
    assert.equal(sent.length, 2, 'two writers, both hanging');
    assert.equal(recorder.stats.pending, 10);
    assert.equal(drops.filter((d) => d === 'queue-full').length, 40);
    for (const release of hanging) release();
  });

  it('never throws, however the API server refuses, and says so once', async () => {
    const forbidden = (sent: Sent) => new KubeApiError(403, 'Forbidden', 'no', sent.method, sent.path);
    const { transport, sent } = fakeApi({ fail: forbidden });
    const warnings: string[] = [];
    const log = { debug() {}, info() {}, error() {}, warn: (message: string) => warnings.push(message) };
    const recorder = new EventRecorder(transport, { logger: log });
    for (let i = 0; i < 3; i++) recorder.record(pod(`p-${i}`, `u-${i}`), 'Normal', 'Made', 'x');
    recorder.record({ kind: 'Pod' }, 'Normal', 'Nameless', 'x');
    await settle();
    assert.equal(sent.length, 3);
    assert.equal(recorder.stats.dropped.failed, 3);
    assert.equal(recorder.stats.dropped.invalid, 1);
    assert.equal(warnings.filter((w) => /403/.test(w)).length, 1, 'one warning for all the refusals');
    assert.match(warnings.join('\n'), /grant create and patch on events/);
  });

  it('falls back to core/v1 Events, counting repeats in count', async () => {
    const { transport, sent } = fakeApi({ eventsV1: false });
    const clock = new ManualClock(T0);
    const recorder = new EventRecorder(transport, { clock, reportingController: 'memcached-controller' });
    recorder.record(pod(), 'Normal', 'Created', 'made it');
    recorder.record(pod(), 'Normal', 'Created', 'made it');
    await settle();
    const body = sent[0]!.body;
    assert.equal(sent[0]!.path, '/api/v1/namespaces/ns/events');
    assert.deepEqual(
      [body.count, body.message, body.reportingComponent, (body.source as { component: string }).component],
      [2, 'made it', 'memcached-controller', 'memcached-controller'],
    );
    assert.equal(body.firstTimestamp, '2024-01-01T00:00:00Z');
    clock.advance(2000);
    recorder.record(pod(), 'Normal', 'Created', 'made it');
    await settle();
    assert.deepEqual(sent[1]!.body, { count: 3, lastTimestamp: '2024-01-01T00:00:02Z' });
  });

  it('creates an expired Event anew when its patch finds it gone', async () => {
    let expired = false;
    const { transport, sent } = fakeApi({
      fail: (s) =>
        expired && s.method === 'PATCH' ? new KubeApiError(404, 'NotFound', 'gone', s.method, s.path) : undefined,
    });
    const recorder = new EventRecorder(transport);
    recorder.record(pod(), 'Normal', 'Tick', 'x');
    await settle();
    expired = true;
    recorder.record(pod(), 'Normal', 'Tick', 'x');
    await settle();
    assert.deepEqual(
      sent.map((s) => s.method),
      ['POST', 'PATCH', 'POST'],
    );
    assert.deepEqual((sent[2]!.body.series as { count: number }).count, 2);
  });

  it('names the reconciling controller as the reporting controller', async () => {
    const { transport, sent } = fakeApi();
    const recorder = new EventRecorder(transport);
    inRun('MemcachedController', () => recorder.record(pod(), 'Normal', 'A', 'x'));
    inRun('has spaces & symbols!', () => recorder.record(pod(), 'Normal', 'B', 'x'));
    await settle();
    assert.deepEqual(
      sent.map((s) => s.body.reportingController),
      ['MemcachedController', 'has-spaces---symbols'],
    );
  });

  it('flushes what is pending on close, within its bound, and records nothing after', async () => {
    const { transport, sent, hanging } = fakeApi({ hang: true });
    const clock = new ManualClock(T0);
    const recorder = new EventRecorder(transport, { clock, concurrency: 1 });
    recorder.record(pod('a', 'ua'), 'Normal', 'A', 'x');
    recorder.record(pod('b', 'ub'), 'Normal', 'B', 'x');
    await settle();
    const closing = recorder.close(1000);
    hanging.shift()!();
    await settle();
    assert.equal(sent.length, 2, 'the queued one is written during the flush');
    clock.advance(1000); // the second hangs past the bound: aborted, dropped as shutdown
    assert.equal(await closing, false);
    await settle();
    recorder.record(pod(), 'Normal', 'Late', 'x');
    assert.equal(recorder.stats.dropped.shutdown, 2);
  });

  it('costs little per call', () => {
    const { transport } = fakeApi({ hang: true });
    const recorder = new EventRecorder(transport);
    const object = pod();
    const n = 100_000;
    const started = performance.now();
    for (let i = 0; i < n; i++) recorder.record(object, 'Normal', 'Synced', 'reconciled');
    const perCallUs = ((performance.now() - started) * 1000) / n;
    // Reported, not asserted (no timed assertions): see the report for the numbers.
    console.log(`EventRecorder.record: ${perCallUs.toFixed(2)} µs per call (repeats of one Event)`);
    assert.equal(recorder.stats.aggregated, n - 1);
  });
});

describe('event names and reporting controllers', () => {
  it('makes DNS subdomains of any object name', () => {
    assert.match(eventName('web-1', T0, 0), /^web-1\.[0-9a-f]+$/);
    assert.match(eventName('system:controller:Foo', T0, 1), /^system-controller-foo\.[0-9a-f]+$/);
    assert.ok(eventName('x'.repeat(300), T0, 2).length <= 253);
    assert.notEqual(eventName('a', T0, 1), eventName('a', T0, 2));
  });

  it('keeps qualified names and mends the others', () => {
    assert.equal(qualifiedName('example.com/memcached'), 'example.com/memcached');
    assert.equal(qualifiedName('-bad name-'), 'bad-name');
    assert.equal(qualifiedName('!!!'), 'nestor');
  });
});
