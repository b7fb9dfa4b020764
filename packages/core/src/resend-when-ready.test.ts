import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Connectivity } from './connectivity.js';
import { resendWhenReady, SentDuringOutage } from './resend-when-ready.js';

describe('resendWhenReady', () => {
  const outage = () => {
    const connectivity = new Connectivity();
    connectivity.notReady();
    return connectivity;
  };

  it('has nothing to watch outside an outage', () => {
    assert.equal(
      resendWhenReady(new Connectivity(), () => assert.fail('resent')),
      undefined,
    );
    assert.equal(
      resendWhenReady(undefined, () => assert.fail('resent')),
      undefined,
    );
  });

  it('resends a request sent during an outage and unanswered when the server is ready', async () => {
    const connectivity = outage();
    const resent = Promise.withResolvers<SentDuringOutage>();
    assert.ok(resendWhenReady(connectivity, resent.resolve));
    connectivity.ready();
    const reason = await resent.promise;
    assert.ok(reason instanceof SentDuringOutage);
    assert.match(reason.message, /sending it again/);
  });

  it('leaves alone a request whose answer began, or whose signal aborted, first', async () => {
    const connectivity = outage();
    const resent: string[] = [];
    const answered = resendWhenReady(connectivity, () => resent.push('answered'));
    answered?.();
    const abort = new AbortController();
    resendWhenReady(connectivity, () => resent.push('aborted'), abort.signal);
    abort.abort();
    connectivity.ready();
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(resent, []);
  });
});
