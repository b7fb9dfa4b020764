import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeApiError, ManualClock } from '@nestor/core';
import { MAX_RETRIES_AS_ASKED, RelistPolicy, WATCH_BACKOFF_RESET_MS, type WatchFailure } from './relist-policy.js';

const request = { method: 'GET', path: '/api/v1/configmaps', watch: true };

function status(code: number, reason: string, message: string, retryAfterSeconds?: number): KubeApiError {
  return KubeApiError.fromResponse(request, code, {
    kind: 'Status',
    code,
    reason,
    message,
    ...(retryAfterSeconds ? { details: { retryAfterSeconds } } : {}),
  });
}

const gone = () => status(410, 'Expired', 'too old resource version: 5 (10)');
const compacted = () => status(500, 'InternalError', 'etcdserver: mvcc: required revision has been compacted');
const tooLarge = (retryAfterSeconds?: number) =>
  status(504, 'Timeout', 'Too large resource version: 200, current: 100', retryAfterSeconds);
const noLeader = () => status(500, 'InternalError', 'etcdserver: no leader');
const network = () =>
  KubeApiError.fromNetwork(
    request,
    'https://127.0.0.1:6443',
    Object.assign(new Error('reset'), { code: 'ECONNRESET' }),
  );
const throttled = (seconds: string) => KubeApiError.fromResponse(request, 429, 'Too many requests', seconds);

const inWatch = (error: Error, resourceVersion = '100'): WatchFailure => ({
  error,
  phase: 'watch',
  resourceVersion,
  listResumes: false,
});
const inList = (error: Error, listResumes = false): WatchFailure => ({
  error,
  phase: 'list',
  resourceVersion: undefined,
  listResumes,
});

/** A policy on a manual clock; random 0 takes the backoff's delays without jitter. */
function policy(random: () => number = () => 0): { clock: ManualClock; policy: RelistPolicy } {
  const clock = new ManualClock();
  return { clock, policy: new RelistPolicy({ clock, random }) };
}

describe('RelistPolicy', () => {
  describe('failures that say nothing (network errors, 5xx)', () => {
    it('resume the watch where it was, after 0.8 s doubling to 30 s', () => {
      const { policy: p } = policy();
      const plans = Array.from({ length: 8 }, () => p.failed(inWatch(network())));
      assert.deepEqual(
        plans.map((plan) => plan.retryInMs),
        [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000],
      );
      assert.deepEqual(plans[0], {
        relist: false,
        gone: false,
        notOlderThan: undefined,
        retryInMs: 800,
        asAsked: false,
      });
    });

    it('add full jitter: up to the delay again', () => {
      const { policy: p } = policy(() => 0.999);
      assert.equal(p.failed(inWatch(network())).retryInMs, Math.round(800 * 1.999));
      assert.equal(p.failed(inWatch(network())).retryInMs, Math.round(1600 * 1.999));
    });

    it('retry a failed LIST as a LIST, not a relist', () => {
      const { policy: p } = policy();
      const plan = p.failed(inList(status(503, 'ServiceUnavailable', 'unavailable')));
      assert.equal(plan.relist, false);
      assert.equal(plan.retryInMs, 800);
    });

    it('start from the first delay once the watch has worked for 30 s since its retry began', () => {
      const { clock, policy: p } = policy();
      assert.equal(p.failed(inWatch(network())).retryInMs, 800);
      clock.advance(800 + WATCH_BACKOFF_RESET_MS);
      assert.equal(p.failed(inWatch(network())).retryInMs, 1600);
      clock.advance(1600 + WATCH_BACKOFF_RESET_MS + 1);
      assert.equal(p.failed(inWatch(network())).retryInMs, 800);
    });

    it('start from the first delay when the server is found ready again (reset)', () => {
      const { policy: p } = policy();
      p.failed(inWatch(network()));
      p.failed(inWatch(network()));
      p.reset();
      assert.equal(p.failed(inWatch(network())).retryInMs, 800);
    });

    it('take the backoff settings given', () => {
      const clock = new ManualClock();
      const p = new RelistPolicy({ clock, random: () => 0, backoff: { initialMs: 100, maxMs: 300 } });
      assert.deepEqual(
        [1, 2, 3, 4].map(() => p.failed(inWatch(network())).retryInMs),
        [100, 200, 300, 300],
      );
    });
  });

  describe('410 Gone', () => {
    it('relists at once, not older than where the watch was (its watch cache)', () => {
      const { policy: p } = policy();
      assert.deepEqual(p.failed(inWatch(gone(), '42')), {
        relist: true,
        gone: true,
        notOlderThan: '42',
        retryInMs: 0,
        asAsked: false,
      });
    });

    it("counts etcd's compaction error passed through as a 500 as the same", () => {
      const { policy: p } = policy();
      const plan = p.failed(inWatch(compacted(), '42'));
      assert.equal(plan.gone, true);
      assert.equal(plan.notOlderThan, '42');
      assert.equal(plan.retryInMs, 0);
    });

    it('waits its backoff when another came within 10 s (a loop), and goes at once after a quiet 10 s', () => {
      const { clock, policy: p } = policy();
      assert.equal(p.failed(inWatch(gone())).retryInMs, 0);
      clock.advance(10_000);
      assert.equal(p.failed(inWatch(gone())).retryInMs, 800);
      clock.advance(10_001);
      assert.equal(p.failed(inWatch(gone())).retryInMs, 0);
    });

    it('relists a LIST that met it (an expired continue token) as a consistent read', () => {
      const { policy: p } = policy();
      const plan = p.failed(inList(gone()));
      assert.equal(plan.relist, true);
      assert.equal(plan.notOlderThan, undefined);
      assert.equal(plan.retryInMs, 0);
    });

    it('waits when the server said when', () => {
      const { policy: p } = policy();
      const plan = p.failed(inWatch(status(410, 'Expired', 'too old resource version', 3)));
      assert.equal(plan.relist, true);
      assert.equal(plan.retryInMs, 3000);
      assert.equal(plan.asAsked, true);
    });
  });

  describe('answers that say when (429, Retry-After, retryAfterSeconds)', () => {
    it('are retried then, and do not grow the backoff', () => {
      const { policy: p } = policy();
      const plan = p.failed(inWatch(throttled('5')));
      assert.deepEqual(plan, { relist: false, gone: false, notOlderThan: undefined, retryInMs: 5000, asAsked: true });
      assert.equal(p.failed(inWatch(status(503, 'ServiceUnavailable', 'busy', 2))).retryInMs, 2000);
      assert.equal(p.failed(inWatch(network())).retryInMs, 800);
    });

    it(`count on the backoff past ${MAX_RETRIES_AS_ASKED} in a row without an event, never sooner than asked`, () => {
      const { policy: p } = policy();
      for (let i = 0; i < MAX_RETRIES_AS_ASKED; i++) assert.equal(p.failed(inWatch(throttled('1'))).asAsked, true);
      const past = p.failed(inWatch(throttled('1')));
      assert.equal(past.asAsked, false);
      assert.equal(past.retryInMs, 1000); // max(800, 1000)
      const longer = p.failed(inWatch(throttled('1')));
      assert.equal(longer.retryInMs, 1600);
    });

    it('are counted from none again after an event', () => {
      const { policy: p } = policy();
      for (let i = 0; i < MAX_RETRIES_AS_ASKED; i++) p.failed(inWatch(throttled('1')));
      p.progressed();
      assert.equal(p.failed(inWatch(throttled('1'))).asAsked, true);
    });
  });

  describe('"too large resourceVersion" (the server is behind)', () => {
    it('resumes a watch when the server asks, at that resourceVersion', () => {
      const { policy: p } = policy();
      const plan = p.failed(inWatch(tooLarge(2), '200'));
      assert.deepEqual(plan, { relist: false, gone: false, notOlderThan: undefined, retryInMs: 2000, asAsked: true });
    });

    it('sends a LIST with a floor to a consistent read, at once: the wait asked for is for that floor', () => {
      const { policy: p } = policy();
      const plan = p.failed(inList(tooLarge(2)));
      assert.equal(plan.relist, false);
      assert.equal(plan.notOlderThan, undefined);
      assert.equal(plan.retryInMs, 0);
    });

    it('waits when the last came within 10 s, or when the LIST resumes at a page', () => {
      const { clock, policy: p } = policy();
      assert.equal(p.failed(inList(tooLarge())).retryInMs, 0);
      clock.advance(5000);
      assert.equal(p.failed(inList(tooLarge())).retryInMs, 800);
      clock.advance(20_000);
      assert.equal(p.failed(inList(tooLarge(), true)).retryInMs, 1600);
    });

    it('makes a relist a consistent read, not one from the resourceVersion the server is behind', () => {
      const { policy: p } = policy();
      const error = tooLarge();
      p.broke(error, '200');
      p.failed(inWatch(error, '200'));
      p.broke(error, '200');
      const plan = p.failed(inWatch(error, '200'));
      assert.equal(plan.relist, true);
      assert.equal(plan.notOlderThan, undefined);
      assert.equal(plan.retryInMs, 0);
    });
  });

  describe("a served watch ended by the server's InternalError", () => {
    it('resumes at once, once per 10 s', () => {
      const { clock, policy: p } = policy();
      const first = noLeader();
      p.broke(first, '100');
      assert.deepEqual(p.failed(inWatch(first, '100')), {
        relist: false,
        gone: false,
        notOlderThan: undefined,
        retryInMs: 0,
        asAsked: false,
      });
      clock.advance(1000);
      const second = noLeader();
      p.broke(second, '101');
      assert.equal(p.failed(inWatch(second, '101')).retryInMs, 800);
      clock.advance(10_001);
      const third = noLeader();
      p.broke(third, '102');
      assert.equal(p.failed(inWatch(third, '102')).retryInMs, 0);
    });

    it('waits the backoff when the 500 answered the request, not the stream', () => {
      const { policy: p } = policy();
      p.broke(noLeader(), '100');
      assert.equal(p.failed(inWatch(noLeader(), '100')).retryInMs, 800);
    });

    it('waits the backoff for an ERROR whose object is no Status (a proxy, not the server)', () => {
      const { policy: p } = policy();
      const error = KubeApiError.fromResponse(request, 500, 'an ERROR event whose object is not a Status (string)');
      p.broke(error, '100');
      assert.equal(p.failed(inWatch(error, '100')).retryInMs, 800);
    });

    it('waits when the server said when', () => {
      const { policy: p } = policy();
      const error = status(500, 'InternalError', 'etcdserver: no leader', 1);
      p.broke(error, '100');
      assert.equal(p.failed(inWatch(error, '100')).retryInMs, 1000);
    });
  });

  describe('a stream broken twice at one resourceVersion', () => {
    const broken = () => new Error('ADDED event without an object');

    it('relists, not older than that resourceVersion, after the backoff', () => {
      const { policy: p } = policy();
      const first = broken();
      p.broke(first, '7');
      assert.equal(p.failed(inWatch(first, '7')).relist, false);
      const second = broken();
      p.broke(second, '7');
      assert.deepEqual(p.failed(inWatch(second, '7')), {
        relist: true,
        gone: false,
        notOlderThan: '7',
        retryInMs: 1600,
        asAsked: false,
      });
    });

    it('resumes when the resourceVersion moved between the breaks', () => {
      const { policy: p } = policy();
      p.broke(broken(), '7');
      p.failed(inWatch(broken(), '7'));
      p.broke(broken(), '8');
      assert.equal(p.failed(inWatch(broken(), '8')).relist, false);
    });

    it('counts again from none after a relist', () => {
      const { policy: p } = policy();
      for (let i = 0; i < 2; i++) {
        p.broke(broken(), '7');
        p.failed(inWatch(broken(), '7'));
      }
      p.broke(broken(), '7');
      assert.equal(p.failed(inWatch(broken(), '7')).relist, false);
    });

    it('relists an InternalError the second time, on the backoff, not at once', () => {
      const { clock, policy: p } = policy();
      const first = noLeader();
      p.broke(first, '7');
      assert.equal(p.failed(inWatch(first, '7')).retryInMs, 0);
      clock.advance(20_000);
      const second = noLeader();
      p.broke(second, '7');
      const plan = p.failed(inWatch(second, '7'));
      assert.equal(plan.relist, true);
      assert.equal(plan.retryInMs, 800);
    });

    it('gives way to 410 Gone, which relists at once', () => {
      const { policy: p } = policy();
      p.broke(broken(), '7');
      p.failed(inWatch(broken(), '7'));
      const error = gone();
      p.broke(error, '7');
      const plan = p.failed(inWatch(error, '7'));
      assert.equal(plan.gone, true);
      assert.equal(plan.retryInMs, 0);
      // The second break was consumed with the relist.
      p.broke(broken(), '9');
      assert.equal(p.failed(inWatch(broken(), '9')).relist, false);
    });

    it('is not counted before a first sync (no resourceVersion)', () => {
      const { policy: p } = policy();
      for (let i = 0; i < 3; i++) {
        const error = broken();
        p.broke(error, undefined);
        assert.equal(p.failed(inList(error)).relist, false);
      }
    });
  });

  it('is deterministic with its clock and random injected', () => {
    const run = () => {
      const { clock, policy: p } = policy(() => 0.5);
      return [gone(), network(), throttled('3'), noLeader(), tooLarge(), network()].map((error) => {
        clock.advance(1000);
        return p.failed(inWatch(error)).retryInMs;
      });
    };
    assert.deepEqual(run(), run());
    assert.deepEqual(run(), [0, 1200, 3000, 2400, 4800, 9600]);
  });
});
