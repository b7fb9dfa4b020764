import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from './testing-clock.js';
import { resourceOf, ThrottleWindows, type ThrottleWindow } from './throttle-windows.js';

const CONFIGMAP = '/api/v1/namespaces/ns/configmaps/cm-1';

/** Enters `window` and records when it was let in. */
function enter(window: ThrottleWindow, log: string[], name: string, signal?: AbortSignal, timeoutMs?: number) {
  const admitted = Promise.resolve(window.enter(signal, timeoutMs)).then(
    () => log.push(`${name} in`),
    (error: Error) => {
      log.push(`${name} failed: ${error.message}`);
    },
  );
  return admitted;
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A window a 429 with Retry-After: 1 opened (8 were in flight), its second passed. */
function pastItsRetryAfter() {
  const clock = new ManualClock(0);
  const windows = new ThrottleWindows(clock);
  windows.throttled(CONFIGMAP, 1_000, 8);
  const window = windows.windowOf(CONFIGMAP)!;
  clock.advance(1_000);
  return { clock, windows, window };
}

describe('resourceOf', () => {
  it('names the resource as a FlowSchema rule does, apart per group', () => {
    assert.equal(resourceOf('/api/v1/namespaces/ns/configmaps/cm-1'), 'configmaps');
    assert.equal(resourceOf('/api/v1/namespaces/ns/configmaps?labelSelector=a%3Db'), 'configmaps');
    assert.equal(resourceOf('/api/v1/namespaces/ns/pods/p/status'), 'pods');
    assert.equal(resourceOf('/api/v1/namespaces/ns'), 'namespaces');
    assert.equal(resourceOf('/api/v1/namespaces'), 'namespaces');
    assert.equal(resourceOf('/api/v1/nodes/n1'), 'nodes');
    assert.equal(resourceOf('/apis/coordination.k8s.io/v1/namespaces/ns/leases/op'), 'coordination.k8s.io/leases');
    assert.equal(resourceOf('/apis/apps/v1/deployments'), 'apps/deployments');
    assert.equal(resourceOf('/apis/example.com/v1/widgets/w/status'), 'example.com/widgets');
    assert.equal(resourceOf('/version'), 'version');
  });
});

describe('ThrottleWindows', () => {
  it('holds nothing until a 429, then lets a throttled resource out one request at a time, in order', async () => {
    const clock = new ManualClock(1_000);
    const windows = new ThrottleWindows(clock);
    assert.equal(windows.windowOf(CONFIGMAP), undefined);

    windows.throttled(CONFIGMAP, 1_000, 8);
    const window = windows.windowOf('/api/v1/namespaces/other/configmaps')!;
    assert.ok(window, 'every request of the resource meets the window');
    const log: string[] = [];
    const all = [enter(window, log, 'a'), enter(window, log, 'b'), enter(window, log, 'c')];
    await settle();
    assert.deepEqual(log, ['a in']);
    window.leave();
    await settle();
    assert.deepEqual(log, ['a in', 'b in']);
    window.leave();
    await settle();
    assert.deepEqual(log, ['a in', 'b in', 'c in']);
    await Promise.all(all);
  });

  it('widens by one per window of answers only after the Retry-After, and closes past where the throttling began', async () => {
    const clock = new ManualClock(0);
    const opened: string[] = [];
    const windows = new ThrottleWindows(clock, (resource, open) => opened.push(`${resource} ${open}`));
    windows.throttled(CONFIGMAP, 2_000, 3);
    assert.deepEqual(opened, ['configmaps true']);
    const window = windows.windowOf(CONFIGMAP)!;
    const log: string[] = [];
    const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k'];
    const all = names.map((name) => enter(window, log, name));
    await settle();
    assert.deepEqual(log, ['a in']);
    /** The oldest request out is answered (the transport tells the window, then leaves it). */
    const answer = async () => {
      window.answered();
      window.leave();
      await settle();
    };

    // Answered within the Retry-After: still one at a time.
    clock.advance(1_999);
    await answer();
    assert.deepEqual(log, ['a in', 'b in'], 'no wider before the Retry-After passed');
    assert.equal(window.limit, 1);

    clock.advance(1);
    await answer(); // b: a window's worth (one) of answers
    assert.equal(window.limit, 2);
    assert.deepEqual(log, ['a in', 'b in', 'c in', 'd in'], 'two out at once');

    await answer(); // c: one of the two answers that widen a window of two
    assert.equal(window.limit, 2, 'not wider after one answer of two');
    await answer(); // d
    assert.equal(window.limit, 3, 'one wider after two answers of two');
    assert.equal(log.length, 7, 'three out at once');
    await answer();
    await answer();
    assert.ok(windows.windowOf(CONFIGMAP), 'still open at the width it began at');
    await answer(); // three answers of three: 4, wider than 3
    assert.equal(windows.windowOf(CONFIGMAP), undefined, 'closed');
    assert.deepEqual(opened, ['configmaps true', 'configmaps false']);
    assert.equal(log.length, names.length, 'everyone waiting goes once it closed');
    await Promise.all(all);
  });

  it('does not widen on answers while fewer requests are out than it allows', async () => {
    // One request out at a time says nothing of whether the server takes two: widened on such
    // answers, the window was at 4-6 within one Retry-After, and the next burst of work met
    // the server's one seat all at once (a crowd of 429s under load in the throttle e2e test).
    const { window } = pastItsRetryAfter();
    assert.equal(window.enter(undefined, undefined), 0);
    window.answered();
    window.leave();
    assert.equal(window.limit, 2, 'a full window of one widened');
    for (let i = 0; i < 10; i++) {
      assert.equal(window.enter(undefined, undefined), 0);
      window.answered();
      window.leave();
    }
    assert.equal(window.limit, 2, 'one out at a time does not widen a window of two');
    const log: string[] = [];
    const burst = ['a', 'b', 'c', 'd'].map((name) => enter(window, log, name));
    await settle();
    assert.deepEqual(log, ['a in', 'b in'], 'a burst meets the server two at a time');
    window.abandon(new Error('done'));
    await Promise.all(burst);
  });

  it('goes back to one at a time on another 429, and holds for its Retry-After', () => {
    const { clock, windows, window } = pastItsRetryAfter();
    assert.equal(window.enter(undefined, undefined), 0);
    window.answered(); // a full window of one: two
    window.leave();
    assert.equal(window.enter(undefined, undefined), 0);
    assert.equal(window.enter(undefined, undefined), 0);
    window.answered();
    window.answered(); // two answers of a full window of two: three
    assert.equal(window.limit, 3);
    windows.throttled(CONFIGMAP, 4_000, 8);
    assert.equal(window.limit, 1);
    clock.advance(3_999);
    window.answered();
    assert.equal(window.limit, 1, 'held for the new Retry-After');
    clock.advance(1);
    window.answered();
    assert.equal(window.limit, 2);
  });

  it('closes a window no request met for a minute after its last 429', () => {
    const clock = new ManualClock(0);
    const windows = new ThrottleWindows(clock);
    windows.throttled(CONFIGMAP, 1_000, 8);
    clock.advance(59_999);
    assert.deepEqual(windows.resources(), ['configmaps']);
    clock.advance(1);
    assert.deepEqual(windows.resources(), [], 'nothing went out to widen it: it says nothing of the server now');
    assert.equal(windows.windowOf(CONFIGMAP), undefined);
  });

  it('fails whoever waits when the transport closes', async () => {
    const windows = new ThrottleWindows(new ManualClock(0));
    windows.throttled(CONFIGMAP, 1_000, 8);
    const window = windows.windowOf(CONFIGMAP)!;
    const log: string[] = [];
    const all = [enter(window, log, 'a'), enter(window, log, 'b')];
    windows.close(new Error('the transport is closed'));
    await Promise.all(all);
    assert.deepEqual(log, ['a in', 'b failed: the transport is closed']);
    assert.deepEqual(windows.resources(), []);
  });

  it('keeps resources apart: a throttled kind does not hold the Lease', () => {
    const windows = new ThrottleWindows(new ManualClock(0));
    windows.throttled(CONFIGMAP, 1_000, 8);
    const window = windows.windowOf(CONFIGMAP)!;
    assert.equal(window.enter(undefined, undefined), 0);
    assert.equal(windows.windowOf('/apis/coordination.k8s.io/v1/namespaces/ns/leases/op'), undefined);
    assert.equal(windows.windowOf('/api/v1/namespaces/ns/secrets/s'), undefined);
  });

  it('lets a waiting request go when its signal aborts or its deadline passes, unsent, and the next one in', async () => {
    const clock = new ManualClock(0);
    const windows = new ThrottleWindows(clock);
    windows.throttled(CONFIGMAP, 1_000, 8);
    const window = windows.windowOf(CONFIGMAP)!;
    const log: string[] = [];
    const controller = new AbortController();
    const all = [
      enter(window, log, 'a'),
      enter(window, log, 'aborted', controller.signal),
      enter(window, log, 'late', undefined, 500),
      enter(window, log, 'next'),
    ];
    await settle();
    controller.abort(new Error('reconcile cancelled'));
    clock.advance(500);
    await settle();
    assert.deepEqual(log, [
      'a in',
      'aborted failed: reconcile cancelled',
      'late failed: no answer within 500 ms: the API server throttles configmaps (429) and the request waited its turn to be sent one at a time; it was not sent',
    ]);
    window.leave();
    await settle();
    assert.equal(log.at(-1), 'next in', 'the requests that left do not hold the window');
    assert.equal(window.inFlight, 1);
    await Promise.all(all);
  });
});
