import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeApiError } from './errors.js';
import { listPages } from './list-pages.js';
import type { RequestOptions, StreamedTransportResponse } from './transport-requests.js';

interface Page {
  metadata: { resourceVersion: string; continue?: string };
  items: string[];
}

/** Answers each GET when the test says so: requests in flight are visible. */
class PagedTransport {
  readonly requests: Array<{ continueToken?: string; signal?: AbortSignal; answer: (page: Page | Error) => void }> = [];

  json<T>(_method: string, _path: string, options: RequestOptions = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const continueToken = options.query?.continue as string | undefined;
      options.signal?.addEventListener('abort', () => reject(options.signal!.reason), { once: true });
      this.requests.push({
        continueToken,
        ...(options.signal ? { signal: options.signal } : {}),
        answer: (page) => (page instanceof Error ? reject(page) : resolve(page as T)),
      });
    });
  }
}

const page = (items: string[], continueToken?: string): Page => ({
  metadata: { resourceVersion: '7', ...(continueToken ? { continue: continueToken } : {}) },
  items,
});
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('listPages', () => {
  it('requests the next page as soon as one arrives, and never more than one ahead', async () => {
    const transport = new PagedTransport();
    const pages = listPages<string>(transport, '/api/v1/configmaps', { pageSize: 2 });
    const first = pages.next();
    await tick();
    transport.requests[0]!.answer(page(['a', 'b'], 'p2'));
    assert.deepEqual((await first).value?.items, ['a', 'b']);
    assert.equal(transport.requests.length, 2, 'page 2 requested while page 1 is processed');
    assert.equal(transport.requests[1]!.continueToken, 'p2');
    await tick();
    assert.equal(transport.requests.length, 2, 'nothing further until page 2 arrives');
    transport.requests[1]!.answer(page(['c'], 'p3'));
    assert.deepEqual((await pages.next()).value?.items, ['c']);
    transport.requests[2]!.answer(page(['d']));
    assert.deepEqual((await pages.next()).value?.items, ['d']);
    assert.equal((await pages.next()).done, true);
    assert.equal(transport.requests.length, 3);
  });

  it('aborts the page read ahead when the caller stops early', async () => {
    const transport = new PagedTransport();
    const pages = listPages<string>(transport, '/api/v1/configmaps');
    const first = pages.next();
    await tick();
    transport.requests[0]!.answer(page(['a'], 'p2'));
    await first;
    const ahead = transport.requests[1]!;
    assert.equal(ahead.signal?.aborted, false);
    await pages.return(undefined);
    assert.equal(ahead.signal?.aborted, true);
  });

  it('starts again from the first page when a continue token expired, flagging the restart', async () => {
    const transport = new PagedTransport();
    let restarts = 0;
    const pages = listPages<string>(transport, '/api/v1/configmaps', { onRestart: () => restarts++ });
    const first = pages.next();
    await tick();
    transport.requests[0]!.answer(page(['a'], 'p2'));
    assert.equal((await first).value?.restarted, false);
    const second = pages.next();
    transport.requests[1]!.answer(new KubeApiError(410, 'Expired', 'continue token expired', 'GET', '/'));
    await tick();
    assert.equal(transport.requests[2]!.continueToken, undefined);
    transport.requests[2]!.answer(page(['a', 'b']));
    const again = (await second).value;
    assert.deepEqual([again?.items, again?.restarted, restarts], [['a', 'b'], true, 1]);
    assert.equal((await pages.next()).done, true);
  });

  it("with expired: 'continue', goes on from the token an expired page's 410 carries, not from the start", async () => {
    const transport = new PagedTransport();
    let restarts = 0;
    const pages = listPages<string>(transport, '/apis/example.com/v1/widgets', {
      expired: 'continue',
      onRestart: () => restarts++,
    });
    const first = pages.next();
    await tick();
    transport.requests[0]!.answer({ ...page(['a'], 'p2'), metadata: { resourceVersion: '7', continue: 'p2' } });
    assert.equal((await first).value?.restarted, false);
    const second = pages.next();
    // What kube-apiserver answers for a token etcd compacted: a new token, at the latest state.
    transport.requests[1]!.answer(
      new KubeApiError(410, 'Expired', 'The provided continue parameter is too old', 'GET', '/', {
        statusObject: { kind: 'Status', code: 410, reason: 'Expired', metadata: { continue: 'p2-latest' } },
      }),
    );
    await tick();
    assert.equal(transport.requests[2]!.continueToken, 'p2-latest');
    transport.requests[2]!.answer({
      metadata: { resourceVersion: '9', remainingItemCount: 0 } as Page['metadata'],
      items: ['b'],
    });
    const rest = (await second).value;
    assert.deepEqual([rest?.items, rest?.restarted, rest?.remainingItemCount, restarts], [['b'], false, 0, 0]);
    assert.equal((await pages.next()).done, true);
  });

  it("with expired: 'continue', restarts when the 410 carries no token", async () => {
    const transport = new PagedTransport();
    const pages = listPages<string>(transport, '/apis/example.com/v1/widgets', { expired: 'continue' });
    const first = pages.next();
    await tick();
    transport.requests[0]!.answer(page(['a'], 'p2'));
    await first;
    const second = pages.next();
    transport.requests[1]!.answer(new KubeApiError(410, 'Expired', 'continue token expired', 'GET', '/'));
    await tick();
    assert.equal(transport.requests[2]!.continueToken, undefined);
    transport.requests[2]!.answer(page(['a', 'b']));
    assert.equal((await second).value?.restarted, true);
  });

  it('throws any other failure, also of a page read ahead', async () => {
    const transport = new PagedTransport();
    const pages = listPages<string>(transport, '/api/v1/configmaps');
    const first = pages.next();
    await tick();
    transport.requests[0]!.answer(page(['a'], 'p2'));
    await first;
    transport.requests[1]!.answer(new KubeApiError(500, 'InternalError', 'boom', 'GET', '/'));
    await tick();
    await assert.rejects(pages.next(), /boom/);
  });

  it('hands each item of a streamed page over as soon as it is decoded, with onItem, before the page ends', async () => {
    const chunks: Array<(chunk: Buffer | undefined) => void> = [];
    const next = () => new Promise<Buffer | undefined>((resolve) => chunks.push(resolve));
    const response: StreamedTransportResponse = {
      status: 200,
      headers: { 'content-type': 'application/json' },
      chunks: (async function* () {
        for (let chunk = await next(); chunk; chunk = await next()) yield chunk;
      })(),
      readBody: () => Promise.reject(new Error('streamed')),
      release: () => {},
    };
    const transport = {
      json: () => Promise.reject(new Error('the page is streamed')),
      requestStreamed: () => Promise.resolve(response),
    };
    const seen: string[] = [];
    const pages = listPages<{ name: string }>(transport, '/api/v1/configmaps', {
      onItem: (item) => seen.push(item.name),
    });
    const first = pages.next();
    await tick();
    chunks.shift()!(Buffer.from('{"metadata":{"resourceVersion":"9"},"items":[{"name":"a"},{"na'));
    await tick();
    assert.deepEqual(seen, ['a'], 'the first item, before the rest of the page');
    chunks.shift()!(Buffer.from('me":"b"}]}'));
    await tick();
    chunks.shift()!(undefined);
    const { value } = await first;
    assert.deepEqual(seen, ['a', 'b']);
    assert.deepEqual(value?.items, [], 'none gathered');
    assert.equal(value?.resourceVersion, '9');
  });

  it('hands the items of a page answered whole to onItem too, and those of a restarted list after onRestart', async () => {
    const transport = new PagedTransport();
    const seen: string[] = [];
    const pages = listPages<string>(transport, '/api/v1/configmaps', {
      onItem: (item) => seen.push(item),
      onRestart: () => seen.push('restart'),
    });
    const first = pages.next();
    await tick();
    transport.requests[0]!.answer(page(['a'], 'p2'));
    assert.deepEqual((await first).value?.items, []);
    const second = pages.next();
    transport.requests[1]!.answer(new KubeApiError(410, 'Expired', 'continue token expired', 'GET', '/'));
    await tick();
    transport.requests[2]!.answer(page(['a', 'b']));
    await second;
    assert.deepEqual(seen, ['a', 'restart', 'a', 'b']);
  });

  it('reads a streamed JSON page whole when its items key is escaped, however many, managedFields dropped', async () => {
    // `"\u0069tems"` is `items` to JSON.parse but not to the item-by-item scan: the items come
    // parsed with the rest of the list at its end. 200,000 of them once overflowed a spread push.
    const count = 200_000;
    const item = '{"metadata":{"name":"a","managedFields":[{"manager":"m"}],"uid":"u"}}';
    const body = Buffer.from(
      `{"metadata":{"resourceVersion":"9"},"\\u0069tems":[${Array(count).fill(item).join(',')}]}`,
    );
    const response: StreamedTransportResponse = {
      status: 200,
      headers: { 'content-type': 'application/json' },
      chunks: (async function* () {
        for (let at = 0; at < body.length; at += 65_536) yield body.subarray(at, at + 65_536);
      })(),
      readBody: () => Promise.resolve(body),
      release: () => {},
    };
    const transport = {
      json: () => Promise.reject(new Error('the page is streamed')),
      requestStreamed: () => Promise.resolve(response),
    };
    const pages = listPages<{ metadata: Record<string, unknown> }>(transport, '/apis/x/v1/widgets', {
      dropManagedFields: true,
    });
    const { value } = await pages.next();
    assert.equal(value?.items.length, count);
    assert.deepEqual(value?.items[count - 1], { metadata: { name: 'a', uid: 'u' } });
    assert.equal(value?.resourceVersion, '9');
  });
});
