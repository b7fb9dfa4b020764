import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock, type RuntimeLogger } from '@nestor/core';
import type { AccessReviews, NonResourceRequest, UserInfo } from './access-reviews.js';
import { MetricsAccess } from './metrics-access.js';

const GET_METRICS: NonResourceRequest = { verb: 'get', path: '/metrics' };

/** The API server's side: which tokens it knows and which users may read /metrics. */
class FakeReviews implements AccessReviews {
  readonly tokenReviews: string[] = [];
  readonly accessReviews: string[] = [];
  failing?: Error;

  constructor(
    readonly users: Record<string, UserInfo>,
    readonly readers: Set<string>,
  ) {}

  async authenticate(token: string): Promise<UserInfo | undefined> {
    this.tokenReviews.push(token);
    if (this.failing) throw this.failing;
    return this.users[token];
  }

  async authorize(user: UserInfo, request: NonResourceRequest): Promise<boolean> {
    this.accessReviews.push(`${user.username} ${request.verb} ${request.path}`);
    if (this.failing) throw this.failing;
    return this.readers.has(user.username) && request.verb === 'get' && request.path === '/metrics';
  }
}

function recordingLogger(): RuntimeLogger & { lines: string[] } {
  const lines: string[] = [];
  const record = (message: string) => void lines.push(message);
  return { lines, debug: record, info: record, warn: record, error: record };
}

const prometheus: UserInfo = {
  username: 'system:serviceaccount:monitoring:prometheus',
  groups: ['system:serviceaccounts'],
};
const stranger: UserInfo = { username: 'system:serviceaccount:default:stranger' };

function setup() {
  const clock = new ManualClock();
  const reviews = new FakeReviews(
    { 'prom-token': prometheus, 'stranger-token': stranger },
    new Set([prometheus.username]),
  );
  const logger = recordingLogger();
  return { clock, reviews, logger, access: new MetricsAccess(reviews, { clock, logger }) };
}

describe('MetricsAccess', () => {
  it('answers 401 without a bearer token, without asking the API server', async () => {
    const { access, reviews } = setup();
    for (const header of [undefined, '', 'Basic dXNlcjpwYXNz', 'Bearer', 'Bearer ', 'Bearer a b']) {
      const decision = await access.check(header, GET_METRICS);
      assert.equal(decision.status, 401, String(header));
    }
    assert.equal(reviews.tokenReviews.length, 0);
  });

  it('answers 401 to a token the API server does not accept', async () => {
    const { access } = setup();
    assert.deepEqual(await access.check('Bearer forged', GET_METRICS), { status: 401, message: 'Unauthorized' });
  });

  it('answers 403, naming the user, to a token whose user may not get /metrics', async () => {
    const { access } = setup();
    const decision = await access.check('Bearer stranger-token', GET_METRICS);
    assert.equal(decision.status, 403);
    assert.match(
      (decision as { message: string }).message,
      /user system:serviceaccount:default:stranger may not get \/metrics/,
    );
  });

  it('lets an authorized user through, with the scheme in any case', async () => {
    const { access } = setup();
    assert.deepEqual(await access.check('Bearer prom-token', GET_METRICS), { status: 200, user: prometheus.username });
    assert.equal((await access.check('bearer  prom-token', GET_METRICS)).status, 200);
    assert.equal((await access.check('Bearer prom-token', { verb: 'post', path: '/metrics' })).status, 403);
  });

  it('asks the API server once per token and decision within the TTLs, again after them', async () => {
    const { access, reviews, clock } = setup();
    for (let i = 0; i < 20; i++) assert.equal((await access.check('Bearer prom-token', GET_METRICS)).status, 200);
    for (let i = 0; i < 20; i++) assert.equal((await access.check('Bearer stranger-token', GET_METRICS)).status, 403);
    for (let i = 0; i < 20; i++) assert.equal((await access.check('Bearer forged', GET_METRICS)).status, 401);
    assert.equal(reviews.tokenReviews.length, 3);
    assert.equal(reviews.accessReviews.length, 2);

    clock.advance(10_000); // a denial is kept 10 s: a newly bound scraper gets in soon
    await access.check('Bearer stranger-token', GET_METRICS);
    await access.check('Bearer prom-token', GET_METRICS);
    assert.equal(reviews.accessReviews.length, 3);
    assert.equal(reviews.tokenReviews.length, 3);

    clock.advance(50_000); // tokens and approvals are kept 1 min
    await access.check('Bearer prom-token', GET_METRICS);
    assert.equal(reviews.tokenReviews.length, 4);
    assert.equal(reviews.accessReviews.length, 4);
  });

  it('answers a flood of made-up tokens with a bounded number of TokenReviews, then 429 with Retry-After', async () => {
    const { access, reviews, clock, logger } = setup();
    assert.equal((await access.check('Bearer prom-token', GET_METRICS)).status, 200);
    const statuses = new Map<number, number>();
    let retryAfter: number | undefined;
    for (let i = 0; i < 2_000; i++) {
      const decision = await access.check(`Bearer random-${i}`, GET_METRICS);
      statuses.set(decision.status, (statuses.get(decision.status) ?? 0) + 1);
      if (decision.status === 429) retryAfter = decision.retryAfterSeconds;
      if (i % 100 === 0) assert.equal((await access.check('Bearer prom-token', GET_METRICS)).status, 200);
    }
    assert.equal(reviews.tokenReviews.length, 20, "the burst of 20, the scraper's first review included");
    assert.deepEqual(Object.fromEntries(statuses), { 401: 19, 429: 1_981 });
    assert.equal(retryAfter, 1);
    assert.equal(logger.lines.filter((line) => line.includes('429')).length, 1, 'one log line, not one per request');

    clock.advance(1_000); // ten more reviews a second
    for (let i = 0; i < 100; i++) await access.check(`Bearer later-${i}`, GET_METRICS);
    assert.equal(reviews.tokenReviews.length, 20 + 10);
    clock.advance(10_000); // the next line counts the refusals since the first
    for (let i = 0; i < 21; i++) await access.check(`Bearer after-${i}`, GET_METRICS);
    assert.match(logger.lines.at(-1)!, /answered 429 to 2071 request\(s\) with tokens not seen before/);
  });

  it('reviews a token accepted before again when its approval expires, whatever the flood', async () => {
    const { access, reviews, clock } = setup();
    await access.check('Bearer prom-token', GET_METRICS);
    clock.advance(60_000);
    for (let i = 0; i < 100; i++) await access.check(`Bearer random-${i}`, GET_METRICS);
    assert.equal((await access.check('Bearer prom-token', GET_METRICS)).status, 200);
    assert.equal(reviews.tokenReviews.filter((token) => token === 'prom-token').length, 2);
    const newcomer = await access.check('Bearer stranger-token', GET_METRICS);
    assert.equal(newcomer.status, 429, 'a token never accepted waits for the limit');
  });

  it('keeps the approvals when the refusals overflow their bound', async () => {
    const clock = new ManualClock();
    const reviews = new FakeReviews({ 'prom-token': prometheus }, new Set([prometheus.username]));
    const access = new MetricsAccess(reviews, {
      clock,
      maxEntries: 8,
      tokenReviewsPerSecond: 1e9,
      tokenReviewBurst: 1e9,
    });
    await access.check('Bearer prom-token', GET_METRICS);
    for (let i = 0; i < 1_000; i++) assert.equal((await access.check(`Bearer random-${i}`, GET_METRICS)).status, 401);
    assert.equal((await access.check('Bearer prom-token', GET_METRICS)).status, 200);
    assert.equal(reviews.tokenReviews.filter((token) => token === 'prom-token').length, 1);
    await access.check('Bearer random-999', GET_METRICS);
    assert.equal(reviews.tokenReviews.length, 1 + 1_000, 'the latest refusals are kept');
  });

  it('answers 500 with no detail when the API server cannot be asked, logs why, and asks again next time', async () => {
    const { access, reviews, logger } = setup();
    reviews.failing = new Error('connect ECONNREFUSED 10.96.0.1:443');
    const decision = await access.check('Bearer prom-token', GET_METRICS);
    assert.deepEqual(decision, { status: 500, message: 'Authentication failed' });
    assert.ok(logger.lines.some((line) => line.includes('ECONNREFUSED 10.96.0.1:443')));
    reviews.failing = undefined;
    assert.equal((await access.check('Bearer prom-token', GET_METRICS)).status, 200);
  });
});
