import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Connectivity } from './connectivity.js';
import { KubeApiError } from './errors.js';
import { retryWhileUnreachable } from './retry-unreachable.js';

const request = { method: 'GET', path: '/api/v1/namespaces' };
const refused = () =>
  KubeApiError.fromNetwork(
    request,
    'https://127.0.0.1:6443',
    Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }),
  );
const forbidden = () => KubeApiError.fromResponse(request, 403, { message: 'forbidden' });

describe('Connectivity', () => {
  it('is in an outage from a request without a response until the gate finds the server ready', () => {
    const connectivity = new Connectivity();
    assert.equal(connectivity.inOutage, false);
    connectivity.failed(refused());
    connectivity.answered(); // a 403 while its RBAC syncs is an answer, not readiness
    assert.equal(connectivity.isUp, true);
    assert.equal(connectivity.inOutage, true);
    connectivity.ready();
    assert.equal(connectivity.inOutage, false);
  });

  it('wakes every whenReady() at the next ready(), and one whose signal aborts at once', async () => {
    const connectivity = new Connectivity();
    const woken: string[] = [];
    const first = connectivity.whenReady().then(() => woken.push('first'));
    const second = connectivity.whenReady().then(() => woken.push('second'));
    const abort = new AbortController();
    const aborted = connectivity.whenReady(abort.signal).then(() => woken.push('aborted'));
    abort.abort();
    await aborted;
    assert.deepEqual(woken, ['aborted']);
    connectivity.ready();
    await Promise.all([first, second]);
    assert.deepEqual(woken.sort(), ['aborted', 'first', 'second']);
  });
});

describe('retryWhileUnreachable with the outage gate', () => {
  it('retries when the server is ready, and retries what it answered meanwhile (403 while it starts)', async () => {
    const connectivity = new Connectivity();
    const failures = [refused(), forbidden()];
    let attempts = 0;
    const result = retryWhileUnreachable(
      async () => {
        attempts++;
        const failure = failures.shift();
        if (!failure) return 'served';
        if (failure.status === 0) connectivity.failed(failure);
        else connectivity.answered();
        // The gate's probe finds the server ready after each failure.
        setImmediate(() => connectivity.ready());
        throw failure;
      },
      // A cap no test waits for: only ready() can end the waits.
      { what: 'checking', timeoutMs: 600_000, intervalMs: 600_000, connectivity },
    );
    // The 403 came after ready(): out of the outage, it is the step's own failure.
    await assert.rejects(result, /forbidden/);
    assert.equal(attempts, 2);
  });

  it('retries a 403 answered while the outage lasts, then succeeds', async () => {
    const connectivity = new Connectivity();
    connectivity.failed(refused());
    let attempts = 0;
    const result = await retryWhileUnreachable(
      async () => {
        if (++attempts === 1) {
          connectivity.answered();
          setImmediate(() => connectivity.ready());
          throw forbidden();
        }
        return 'served';
      },
      { what: 'checking', timeoutMs: 600_000, intervalMs: 600_000, connectivity },
    );
    assert.equal(result, 'served');
    assert.equal(attempts, 2);
  });

  it('with restartWhenReady, starts again when the server is ready while an attempt sent during the outage is held', async () => {
    const connectivity = new Connectivity();
    connectivity.failed(refused());
    let attempts = 0;
    const result = retryWhileUnreachable(
      async () => {
        // A starting server holds the first request; the gate's probe then finds it ready.
        if (++attempts === 1) {
          setImmediate(() => connectivity.ready());
          return new Promise<string>(() => {});
        }
        return 'served';
      },
      { what: 'checking', timeoutMs: 600_000, intervalMs: 600_000, connectivity, restartWhenReady: true },
    );
    assert.equal(await result, 'served');
    assert.equal(attempts, 2);
  });

  it('without restartWhenReady, waits for the attempt it sent', async () => {
    const connectivity = new Connectivity();
    connectivity.failed(refused());
    let attempts = 0;
    let answer: (value: string) => void = () => {};
    const result = retryWhileUnreachable(
      () => {
        attempts++;
        setImmediate(() => connectivity.ready());
        return new Promise<string>((resolve) => (answer = resolve));
      },
      { what: 'checking', timeoutMs: 600_000, intervalMs: 600_000, connectivity },
    );
    await new Promise((resolve) => setImmediate(resolve));
    answer('answered late');
    assert.equal(await result, 'answered late');
    assert.equal(attempts, 1);
  });

  it('throws an answered failure at once outside an outage', async () => {
    const connectivity = new Connectivity();
    await assert.rejects(
      retryWhileUnreachable(() => Promise.reject(forbidden()), { what: 'checking', timeoutMs: 600_000, connectivity }),
      /forbidden/,
    );
  });
});
