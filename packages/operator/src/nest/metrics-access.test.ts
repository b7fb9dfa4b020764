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
