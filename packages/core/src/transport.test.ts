import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeApiError } from './errors.js';
import { Transport } from './transport.js';

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A local HTTP server standing in for the API server; the test sets its handler. */
async function fakeServer() {
  let handler: Handler = (_req, res) => res.end('{}');
  const connections = new Set<unknown>();
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => handler(req, res, body));
  });
  server.on('connection', (socket) => connections.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    connections,
    handle: (next: Handler) => (handler = next),
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

function kubeConfig(server: string, user: object = { name: 'u', token: 'secret' }): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, skipTLSVerify: true }],
    users: [user],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

describe('Transport', () => {
  let server: Awaited<ReturnType<typeof fakeServer>>;
  let transport: Transport;
  before(async () => {
    server = await fakeServer();
    transport = await Transport.fromKubeConfig(kubeConfig(server.url));
  });
  after(async () => {
    transport?.close();
    await server?.close();
  });

  it('sends JSON with the auth header and query, over one kept-alive connection', async () => {
    const seen: string[] = [];
    server.handle((req, res, body) => {
      seen.push(`${req.method} ${req.url} ${req.headers.authorization} ${req.headers['content-type'] ?? '-'} ${body}`);
      res.end(JSON.stringify({ ok: true }));
    });
    const before = server.connections.size;
    for (let i = 0; i < 5; i++) {
      assert.deepEqual(
        await transport.json('POST', '/api/v1/x', { body: { i }, query: { a: 'b c', skip: undefined } }),
        {
          ok: true,
        },
      );
    }
    assert.equal(seen[0], 'POST /api/v1/x?a=b%20c Bearer secret application/json {"i":0}');
    assert.equal(server.connections.size - before, 1, 'one connection for five requests');
  });

  it('throws a KubeApiError with the Status reason and message on a status >= 400', async () => {
    server.handle((_req, res) => {
      res.statusCode = 409;
      res.end(
        JSON.stringify({ kind: 'Status', code: 409, reason: 'Conflict', message: 'the object has been modified' }),
      );
    });
    const error = await transport
      .json('PUT', '/api/v1/namespaces/n/configmaps/c', { body: {} })
      .catch((e: unknown) => e);
    assert.ok(error instanceof KubeApiError);
    assert.equal(error.status, 409);
    assert.equal(error.reason, 'Conflict');
    assert.match(
      error.message,
      /PUT \/api\/v1\/namespaces\/n\/configmaps\/c: HTTP 409 Conflict: the object has been modified/,
    );
  });

  it('sends a request answered 429 again once the Retry-After has passed, body and all', async () => {
    const seen: Array<{ at: number; body: string }> = [];
    server.handle((_req, res, body) => {
      seen.push({ at: Date.now(), body });
      if (seen.length === 1) {
        res.writeHead(429, { 'retry-after': '1', 'content-type': 'text/plain' });
        return void res.end('Too many requests, please try again later.');
      }
      res.end('{"ok":true}');
    });
    const throttled = transport.stats.throttled;
    assert.deepEqual(await transport.json('PATCH', '/api/v1/x', { body: { a: 1 } }), { ok: true });
    assert.deepEqual(
      seen.map((s) => s.body),
      ['{"a":1}', '{"a":1}'],
    );
    // 2 ms for the timer's rounding.
    assert.ok(seen[1]!.at - seen[0]!.at >= 998, `sent again after ${seen[1]!.at - seen[0]!.at} ms, asked 1000`);
    assert.equal(transport.stats.throttled - throttled, 1);
    assert.equal(transport.stats.inFlight, 0);
  });

  it('after a 429 sends the resource one request at a time; a request Node refuses to send gives its place back', async () => {
    const own = await Transport.fromKubeConfig(kubeConfig(server.url));
    let first = true;
    let inFlight = 0;
    let most = 0;
    server.handle((req, res) => {
      if (first && req.url?.includes('/configmaps/')) {
        first = false;
        res.writeHead(429, { 'retry-after': '1' });
        return void res.end();
      }
      inFlight++;
      most = Math.max(most, inFlight);
      setTimeout(() => {
        inFlight--;
        res.end('{"ok":true}');
      }, 20);
    });
    try {
      const path = (name: string) => `/api/v1/namespaces/n/configmaps/${name}`;
      const refused = own.json('GET', path('a'));
      for (let tries = 0; own.throttledResources.length === 0 && tries < 500; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.deepEqual(own.throttledResources, ['configmaps']);
      // Within the Retry-After: one at a time, however many are asked for at once.
      await Promise.all(['b', 'c', 'd', 'e'].map((name) => own.json('GET', path(name))));
      assert.equal(most, 1, 'one at a time');
      assert.ok(own.stats.held >= 3, `${own.stats.held} held`);
      // Another resource is not held.
      await Promise.all([own.json('GET', '/api/v1/namespaces/n/secrets/s'), own.json('GET', path('f'))]);
      assert.equal(most, 2);
      // Refused by Node before anything was sent: not an outage, and the place is free again.
      await assert.rejects(own.json('GET', path('bad name')), /unescaped characters/i);
      assert.equal(own.connectivity.isUp, true);
      assert.deepEqual(await own.json('GET', path('g')), { ok: true });
      assert.deepEqual(await refused, { ok: true });
    } finally {
      own.close();
    }
  });

  it('sends a read answered 503 with Retry-After again, never a write (it may have been done)', async () => {
    let requests = 0;
    server.handle((req, res) => {
      requests++;
      if (req.method === 'GET' && requests > 2) return void res.end('{"ok":true}');
      res.writeHead(503, { 'retry-after': '1' });
      res.end();
    });
    const error = await transport.json('POST', '/api/v1/x', { body: {} }).catch((e: unknown) => e);
    assert.ok(error instanceof KubeApiError && error.status === 503, String(error));
    assert.equal(error.retryAfterSeconds, 1);
    assert.equal(requests, 1, 'the write is the caller’s to retry');
    assert.deepEqual(await transport.json('GET', '/api/v1/x'), { ok: true });
    assert.equal(requests, 3, 'the read sent again once');
  });

  it('returns a 429 whose wait would pass the deadline, or whose wait is aborted, without sending again', async () => {
    let requests = 0;
    server.handle((_req, res) => {
      requests++;
      res.writeHead(429, { 'retry-after': '1' });
      res.end();
    });
    const error = await transport.json('GET', '/api/v1/x', { timeoutMs: 500 }).catch((e: unknown) => e);
    assert.ok(error instanceof KubeApiError && error.status === 429, String(error));
    assert.equal(error.retryAfterSeconds, 1, 'the caller learns how long to wait');
    assert.equal(requests, 1);

    const abort = new AbortController();
    const reason = new Error('stopped');
    setTimeout(() => abort.abort(reason), 50);
    await assert.rejects(transport.json('GET', '/api/v1/x', { signal: abort.signal }), reason);
    assert.equal(requests, 2, 'nothing sent after the abort');
  });

  it('streams JSON lines as they arrive, split anywhere, and counts the watch', async () => {
    server.handle((_req, res) => {
      const wire = '{"type":"ADDED","n":1}\n{"type":"MODIFIED","n":2}\n{"type":"DELETED","n":3}\n';
      res.write(wire.slice(0, 10));
      setTimeout(() => res.write(wire.slice(10, 30)), 5);
      setTimeout(() => res.end(wire.slice(30)), 10);
    });
    const watches = transport.stats.watches;
    const values: unknown[] = [];
    for await (const value of transport.stream('/api/v1/pods', { watch: true })) values.push(value);
    assert.deepEqual(values, [
      { type: 'ADDED', n: 1 },
      { type: 'MODIFIED', n: 2 },
      { type: 'DELETED', n: 3 },
    ]);
    assert.equal(transport.stats.watches - watches, 1);
  });

  it('throws from the stream on an HTTP error and on abort, and the connection pool survives both', async () => {
    server.handle((_req, res) => {
      res.statusCode = 410;
      res.end(JSON.stringify({ kind: 'Status', code: 410, reason: 'Expired', message: 'too old' }));
    });
    await assert.rejects(
      async () => {
        for await (const _ of transport.stream('/api/v1/pods', { watch: true })) void _;
      },
      (error: unknown) => error instanceof KubeApiError && error.isGone,
    );

    server.handle((_req, res) => res.write('{"type":"ADDED"}\n'));
    const abort = new AbortController();
    const reason = new Error('stop watching');
    await assert.rejects(async () => {
      for await (const _ of transport.stream('/api/v1/pods', { watch: true }, abort.signal)) abort.abort(reason);
    }, reason);
    // Aborting as the response completes: its socket is on its way back to the pool.
    server.handle((_req, res) => res.end('{"type":"ADDED"}\n'));
    for (let i = 0; i < 20; i++) {
      const late = new AbortController();
      await assert.rejects(async () => {
        for await (const _ of transport.stream('/api/v1/pods', { watch: true }, late.signal)) late.abort(reason);
      }, reason);
    }
    // An aborted signal must not reach a socket the pool hands to the next request.
    server.handle((_req, res) => res.end('{"fine":true}'));
    for (let i = 0; i < 3; i++) assert.deepEqual(await transport.json('GET', '/api/v1/x'), { fine: true });
  });

  it('ends a request at its deadline with a Timeout error', async () => {
    server.handle(() => {});
    const error = await transport.json('GET', '/api/v1/slow', { timeoutMs: 50 }).catch((e: unknown) => e);
    assert.ok(error instanceof KubeApiError);
    assert.equal(error.reason, 'Timeout');
    assert.match(error.message, /no complete answer within 50 ms/);
  });

  it('takes a deadline for a slow server, not a gone one, when others were answered meanwhile', async () => {
    server.handle((req, res) => {
      if (req.url?.startsWith('/api/v1/slow')) return; // never answered
      res.end('{}');
    });
    const slow = transport.json('GET', '/api/v1/slow', { timeoutMs: 300 }).catch((e: unknown) => e);
    await transport.json('GET', '/api/v1/fast');
    const error = await slow;
    assert.ok(error instanceof KubeApiError && error.reason === 'Timeout', String(error));
    assert.equal(transport.connectivity.isUp, true, 'answered meanwhile: slow, not unreachable');

    // Nothing answered since it was sent: the server may be gone.
    const alone = await transport.json('GET', '/api/v1/slow', { timeoutMs: 50 }).catch((e: unknown) => e);
    assert.ok(alone instanceof KubeApiError && alone.reason === 'Timeout', String(alone));
    assert.equal(transport.connectivity.isUp, false);
    await transport.json('GET', '/api/v1/fast');
    assert.equal(transport.connectivity.isUp, true);
  });

  it('says the API server is unreachable when nothing listens', async () => {
    const closed = await fakeServer();
    await closed.close();
    const lonely = await Transport.fromKubeConfig(kubeConfig(closed.url));
    const error = await lonely.json('GET', '/api/v1/pods').catch((e: unknown) => e);
    lonely.close();
    assert.ok(error instanceof KubeApiError);
    assert.equal(error.reason, 'Unreachable');
    assert.match(error.message, /The API server at http:\/\/127.0.0.1:\d+ is unreachable/);
  });
});

describe('Transport with credentials that expire', () => {
  let server: Awaited<ReturnType<typeof fakeServer>>;
  let dir: string;
  before(async () => {
    server = await fakeServer();
    dir = await mkdtemp(join(tmpdir(), 'nestor-transport-'));
  });
  after(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('reads an exec plugin token again on a 401, once, and retries', async () => {
    const tokenFile = join(dir, 'token');
    await writeFile(tokenFile, 'first');
    // An exec credential that is already expired, so client-node runs the plugin each time it is asked.
    const script = `const t=require('fs').readFileSync(${JSON.stringify(tokenFile)},'utf8');console.log(JSON.stringify({apiVersion:'client.authentication.k8s.io/v1',kind:'ExecCredential',status:{token:t,expirationTimestamp:'2000-01-01T00:00:00Z'}}))`;
    const exec = { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: ['-e', script] };
    const transport = await Transport.fromKubeConfig(kubeConfig(server.url, { name: 'u', exec }), {
      authRefreshMs: 3_600_000,
    });
    const tokens: string[] = [];
    server.handle((req, res) => {
      tokens.push(String(req.headers.authorization));
      res.statusCode = req.headers.authorization === 'Bearer second' ? 200 : 401;
      res.end('{}');
    });
    await writeFile(tokenFile, 'second');
    await transport.json('GET', '/api/v1/pods');
    assert.deepEqual(tokens, ['Bearer first', 'Bearer second']);

    tokens.length = 0;
    await writeFile(tokenFile, 'third');
    server.handle((req, res) => {
      tokens.push(String(req.headers.authorization));
      res.statusCode = 401;
      res.end('{}');
    });
    const error = await transport.json('GET', '/api/v1/pods').catch((e: unknown) => e);
    assert.deepEqual(tokens, ['Bearer second', 'Bearer third'], 'one refresh and one retry, no more');
    assert.ok(error instanceof KubeApiError && error.status === 401);
    assert.match(error.message, /did not accept the credentials/);
    transport.close();
  });
});
