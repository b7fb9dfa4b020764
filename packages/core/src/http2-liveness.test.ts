import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Liveness, MIN_HTTP2_PING_DEADLINE_MS, pingDeadlineMs } from './http2-liveness.js';
import { ManualClock } from './testing-clock.js';

function setup() {
  const clock = new ManualClock();
  const pings: Array<() => void> = [];
  const deaths: Error[] = [];
  const liveness = new Liveness(
    (answered) => pings.push(answered),
    (error) => deaths.push(error),
    { readIdleMs: 30_000, pingTimeoutMs: 15_000, clock },
  );
  return { clock, pings, deaths, liveness };
}

describe('Liveness (HTTP/2 PING when silent)', () => {
  it('pings only after readIdleMs with nothing read', () => {
    const { clock, pings, liveness } = setup();
    clock.advance(20_000);
    liveness.read();
    clock.advance(29_000);
    assert.equal(pings.length, 0, 'a read 29 s ago: not idle yet');
    clock.advance(1_000);
    assert.equal(pings.length, 1);
  });

  it('stays alive while PINGs are answered, one PING out at a time', () => {
    const { clock, pings, deaths, liveness } = setup();
    clock.advance(30_000);
    liveness.check();
    assert.equal(pings.length, 1, 'check() while a PING is out sends no second one');
    clock.advance(5_000);
    pings[0]!();
    clock.advance(29_000);
    assert.equal(pings.length, 1);
    clock.advance(1_000);
    assert.equal(pings.length, 2, 'idle again 30 s after the answer');
    pings[1]!();
    assert.deepEqual(deaths, []);
  });

  it('declares the connection dead when a PING gets no answer within pingTimeoutMs, once', () => {
    const { clock, pings, deaths } = setup();
    clock.advance(30_000);
    clock.advance(14_999);
    assert.equal(deaths.length, 0);
    clock.advance(1);
    assert.equal(deaths.length, 1);
    assert.match(deaths[0]!.message, /no answer to an HTTP\/2 PING within 15000 ms/);
    assert.equal((deaths[0] as NodeJS.ErrnoException).code, 'ETIMEDOUT');
    pings[0]!(); // a late answer changes nothing
    clock.advance(120_000);
    assert.equal(deaths.length, 1);
    assert.equal(clock.pendingTimers, 0);
  });

  it('check() pings at once (a request got no answer) and stop() ends it all', () => {
    const { clock, pings, deaths, liveness } = setup();
    clock.advance(1_000);
    liveness.check();
    assert.equal(pings.length, 1);
    liveness.stop();
    clock.advance(60_000);
    assert.deepEqual(deaths, []);
    assert.equal(clock.pendingTimers, 0);
  });

  it('hasten() shortens the wait for a PING out, never lengthens it, and says why the connection died', () => {
    const { clock, pings, deaths, liveness } = setup();
    liveness.hasten(1_000);
    clock.advance(20_000);
    assert.equal(pings.length, 0, 'no PING out: nothing to hasten');
    liveness.check();
    assert.equal(liveness.pingOutSince, 20_000);
    clock.advance(500);
    liveness.hasten(20_000); // later than the PING's own deadline: no change
    liveness.hasten(1_500);
    clock.advance(1_499);
    assert.equal(deaths.length, 0);
    clock.advance(1);
    assert.equal(deaths.length, 1);
    assert.match(deaths[0]!.message, /within 2000 ms \(another connection to the server answered meanwhile\)/);
    assert.equal(liveness.pingOutSince, undefined);
  });

  it('an answer that comes before the hastened deadline keeps the connection', () => {
    const { clock, pings, deaths, liveness } = setup();
    liveness.check();
    liveness.hasten(1_000);
    clock.advance(999);
    pings[0]!();
    clock.advance(30_000);
    assert.equal(pings.length, 2, 'idle checks go on as before');
    pings[1]!();
    clock.advance(20_000);
    assert.deepEqual(deaths, []);
  });

  it('waits less for an answer once the connection has shown it answers in milliseconds', () => {
    const { clock, pings, deaths } = setup();
    clock.advance(30_000);
    clock.advance(2);
    pings[0]!(); // answered in 2 ms
    clock.advance(30_000);
    assert.equal(pings.length, 2);
    clock.advance(MIN_HTTP2_PING_DEADLINE_MS - 1);
    assert.equal(deaths.length, 0);
    clock.advance(1);
    assert.equal(deaths.length, 1, 'dead after the 3 s floor, not the 15 s pingTimeoutMs');
    assert.match(deaths[0]!.message, /within 3000 ms/);
  });

  it('a slow answer among the recent ones lengthens the wait again, up to pingTimeoutMs', () => {
    const { clock, pings, deaths } = setup();
    clock.advance(30_000);
    clock.advance(400);
    pings[0]!(); // 400 ms: the next waits 20 x 400 = 8 s
    clock.advance(30_000);
    clock.advance(7_999);
    assert.equal(deaths.length, 0, 'an answer may take 8 s');
    clock.advance(1);
    assert.equal(deaths.length, 1);
    assert.match(deaths[0]!.message, /within 8000 ms/);
  });

  it('the slowest of the recent answers sets the wait, not the last one', () => {
    const { clock, pings, deaths } = setup();
    clock.advance(30_000);
    clock.advance(400);
    pings[0]!(); // 400 ms
    clock.advance(30_000);
    clock.advance(1);
    pings[1]!(); // 1 ms
    clock.advance(30_000);
    clock.advance(7_999);
    assert.equal(deaths.length, 0);
    clock.advance(1);
    assert.equal(deaths.length, 1, 'the 400 ms answer is still among the recent ones');
  });
});

describe('pingDeadlineMs', () => {
  it('is pingTimeoutMs before any answer, then 20x the slowest recent answer within [3 s, pingTimeoutMs]', () => {
    assert.equal(pingDeadlineMs([], 10_000), 10_000);
    assert.equal(pingDeadlineMs([1, 2, 1], 10_000), MIN_HTTP2_PING_DEADLINE_MS);
    assert.equal(pingDeadlineMs([1, 250, 1], 10_000), 5_000);
    assert.equal(pingDeadlineMs([2_000], 10_000), 10_000);
    assert.equal(pingDeadlineMs([1], 2_000), 2_000, 'a pingTimeoutMs under the floor is kept');
  });
});
