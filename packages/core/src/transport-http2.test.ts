import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeApiError } from './errors.js';
import { Transport } from './transport.js';

// The HTTP/2 path against local TLS servers: one that speaks h2 (and HTTP/1.1 when allowed),
// one that offers only HTTP/1.1 in ALPN. Node makes no certificates: openssl does.
let dir: string;
let tlsFiles: { key: Buffer; cert: Buffer };
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'nestor-h2-'));
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1']
      .concat(['-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'])
      .concat(['-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')]),
    { stdio: 'ignore' },
  );
  tlsFiles = { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
});
after(() => rmSync(dir, { recursive: true, force: true }));

function kubeConfig(port: number, user: object = { name: 'u', token: 'secret' }): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, caData: tlsFiles.cert.toString('base64') }],
    users: [user],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

async function listen(server: https.Server | http2.Http2SecureServer): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

describe('Transport over HTTP/2', () => {
  let server: http2.Http2SecureServer;
  let port: number;
  const sessions = new Set<http2.ServerHttp2Session>();
  before(async () => {
    server = http2.createSecureServer({ ...tlsFiles, allowHTTP1: true });
    server.on('session', (session) => sessions.add(session));
    server.on('request', (req, res) => {
      if (req.url.includes('watch=true')) {
        res.write('{"type":"ADDED","n":1}\n');
        return; // held open until the client ends it
      }
      if (req.url.startsWith('/slow')) return;
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () =>
        res.end(JSON.stringify({ version: req.httpVersion, auth: req.headers.authorization, body, path: req.url })),
      );
    });
    port = await listen(server);
  });
  after(() => {
    for (const session of sessions) session.destroy();
    server.close();
  });

  it('multiplexes requests and watches on one connection; a cut stream leaves its siblings alone, a deadline moves new streams to a new connection', async () => {
    const transport = await Transport.fromKubeConfig(kubeConfig(port), { http2: true });
    const before = sessions.size;
    try {
      const watching = new AbortController();
      const watch = (async () => {
        const seen: unknown[] = [];
        try {
          for await (const event of transport.stream('/api/v1/pods', { watch: true }, watching.signal))
            seen.push(event);
        } catch (error) {
          assert.equal(error, watching.signal.reason);
        }
        return seen;
      })();
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          transport.json<{ version: string; auth: string; body: string; path: string }>('POST', '/api/v1/x', {
            body: { i },
            query: { a: 'b c' },
          }),
        ),
      );
      assert.deepEqual(answers[3], {
        version: '2.0',
        auth: 'Bearer secret',
        body: '{"i":3}',
        path: '/api/v1/x?a=b%20c',
      });
      assert.equal(transport.protocol, 'h2');

      const error = await transport.json('GET', '/slow', { timeoutMs: 50 }).catch((e: unknown) => e);
      assert.ok(error instanceof KubeApiError && error.reason === 'Timeout');
      watching.abort(new Error('done watching'));
      assert.deepEqual(await watch, [{ type: 'ADDED', n: 1 }]);
      assert.deepEqual((await transport.json<{ body: string }>('POST', '/api/v1/y', { body: 'ok' })).body, 'ok');
      // The deadline made the first connection suspect (no answer): the last request took a
      // new one, while the watch went on on the first until its abort.
      assert.equal(sessions.size - before, 2, 'one connection for the watch and 20 requests, one after the deadline');
    } finally {
      transport.close();
    }
  });

  it('lets go of a closed stream: nothing of the request hangs on it for the GC to promote', async () => {
    // Node keeps a closed stream until a full GC; what its listeners reach would go to old
    // space with it. The exchanges are taken as they open, to look at their streams after.
    type Opened = { stream?: http2.ClientHttp2Stream; onClose: () => void };
    const transport = await Transport.fromKubeConfig(kubeConfig(port), { http2: true });
    const exchanger = (transport as unknown as { exchanger: { open(request: unknown): unknown } }).exchanger;
    const opened: Opened[] = [];
    const open = exchanger.open.bind(exchanger);
    try {
      // Connected first: with a connection open each request is on its stream at once, and
      // the short deadline below cuts a sent request, not one still waiting to connect.
      await transport.json('GET', '/api/v1/x');
      exchanger.open = (request) => {
        const exchange = open(request) as Opened;
        opened.push(exchange);
        return exchange;
      };
      await Promise.all([
        transport.json('POST', '/api/v1/x', { body: { a: 1 } }),
        transport.json('GET', '/api/v1/x'),
        transport.json('GET', '/slow', { timeoutMs: 20 }).catch(() => undefined),
      ]);
      assert.equal(opened.length, 3);
      for (const exchange of opened) {
        assert.ok(exchange.stream, 'each request went out on a stream');
        const stream: http2.ClientHttp2Stream = exchange.stream;
        // Its 'close' has come once the exchange's own (once) listener for it is gone; a
        // listener added now runs after the exchange's.
        if (stream.listeners('close').includes(exchange.onClose))
          await new Promise((resolve) => stream.once('close', resolve));
        for (const event of ['response', 'data', 'end', 'close'] as const) {
          const ours = stream
            .listeners(event)
            .filter((listener) => !/^(bound )?(onceWrapper|\[?kMaybeDestroy\]?)$/.test(listener.name));
          assert.deepEqual(
            ours.map((listener) => listener.name || '(anonymous)'),
            [],
            `the exchange's '${event}' listeners are gone`,
          );
        }
        // An 'error' listener stays, one that holds nothing: no stream error is ever unhandled.
        assert.deepEqual(
          stream.listeners('error').map((listener) => listener.name),
          ['ignoreAfterClose'],
        );
      }
    } finally {
      transport.close();
    }
  });

  it('uses HTTP/2 by default, and says its connections are checked by PING', async () => {
    const transport = await Transport.fromKubeConfig(kubeConfig(port));
    try {
      assert.equal(transport.checksLiveness, false, 'not known before the first connection');
      assert.equal((await transport.json<{ version: string }>('GET', '/api/v1/x')).version, '2.0');
      assert.equal(transport.protocol, 'h2');
      assert.equal(transport.checksLiveness, true);
    } finally {
      transport.close();
    }
  });

  it("uses HTTP/1.1 with http2: false, or with DISABLE_HTTP2 set (client-go's switch)", async () => {
    const told = await Transport.fromKubeConfig(kubeConfig(port), { http2: false });
    process.env['DISABLE_HTTP2'] = '1';
    let disabled: Transport | undefined;
    try {
      disabled = await Transport.fromKubeConfig(kubeConfig(port), { http2: true });
      for (const transport of [told, disabled]) {
        assert.equal((await transport.json<{ version: string }>('GET', '/api/v1/x')).version, '1.1');
        assert.equal(transport.protocol, 'http/1.1');
        assert.equal(transport.checksLiveness, false);
      }
    } finally {
      delete process.env['DISABLE_HTTP2'];
      told.close();
      disabled?.close();
    }
  });
});

describe('Transport to a server whose ALPN offers only HTTP/1.1', () => {
  it('falls back to HTTP/1.1 and stays there', async () => {
    const server = https.createServer(tlsFiles, (req, res) => res.end(JSON.stringify({ version: req.httpVersion })));
    const port = await listen(server);
    const transport = await Transport.fromKubeConfig(kubeConfig(port), { http2: true });
    try {
      assert.equal(transport.protocol, undefined, 'not known before the first connection');
      for (let i = 0; i < 3; i++) {
        assert.equal((await transport.json<{ version: string }>('GET', '/api/v1/x')).version, '1.1');
      }
      assert.equal(transport.protocol, 'http/1.1');
    } finally {
      transport.close();
      server.closeAllConnections();
      server.close();
    }
  });
});

/** An exec plugin user whose token is the file's content, read again each time it is asked (it is already expired). */
function execUser(tokenFile: string): object {
  const script = `const t=require('fs').readFileSync(${JSON.stringify(tokenFile)},'utf8');console.log(JSON.stringify({apiVersion:'client.authentication.k8s.io/v1',kind:'ExecCredential',status:{token:t,expirationTimestamp:'2000-01-01T00:00:00Z'}}))`;
  return {
    name: 'u',
    exec: { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: ['-e', script] },
  };
}

// Auth, resends, deadlines and aborts are written once above the protocols: the same
// behaviour on each.
for (const http2Wanted of [false, true]) {
  const protocol = http2Wanted ? 'h2' : 'http/1.1';
  describe(`Transport over ${protocol}: what every protocol shares`, () => {
    type Handler = (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void;
    let server: http2.Http2SecureServer;
    let port: number;
    let handler: Handler;
    const sessions = new Set<http2.ServerHttp2Session>();
    before(async () => {
      server = http2.createSecureServer({ ...tlsFiles, allowHTTP1: true });
      server.on('session', (session) => sessions.add(session));
      server.on('request', (req, res) => handler(req, res));
      port = await listen(server);
    });
    after(() => {
      for (const session of sessions) session.destroy();
      server.close();
    });

    it('reads expiring credentials again on a 401 and sends once more, once', async () => {
      const tokenFile = join(dir, `token-${http2Wanted ? 'h2' : 'h1'}`);
      writeFileSync(tokenFile, 'first');
      const transport = await Transport.fromKubeConfig(kubeConfig(port, execUser(tokenFile)), {
        http2: http2Wanted,
        authRefreshMs: 3_600_000,
      });
      try {
        const tokens: string[] = [];
        handler = (req, res) => {
          tokens.push(`${req.httpVersion} ${req.headers.authorization}`);
          res.statusCode = req.headers.authorization === 'Bearer second' ? 200 : 401;
          res.end('{}');
        };
        writeFileSync(tokenFile, 'second');
        await transport.json('POST', '/api/v1/x', { body: {} });
        const version = http2Wanted ? '2.0' : '1.1';
        assert.deepEqual(tokens, [`${version} Bearer first`, `${version} Bearer second`]);
        assert.equal(transport.protocol, protocol);

        tokens.length = 0;
        writeFileSync(tokenFile, 'third');
        handler = (req, res) => {
          tokens.push(`${req.httpVersion} ${req.headers.authorization}`);
          res.statusCode = 401;
          res.end('{}');
        };
        const error = await transport.json('GET', '/api/v1/x').catch((e: unknown) => e);
        assert.deepEqual(tokens, [`${version} Bearer second`, `${version} Bearer third`], 'one refresh, one resend');
        assert.ok(error instanceof KubeApiError && error.status === 401);
      } finally {
        transport.close();
      }
    });

    it('cuts a streamed body at its deadline and on abort, and the connection serves the next request', async () => {
      const transport = await Transport.fromKubeConfig(kubeConfig(port), { http2: http2Wanted });
      try {
        handler = (req, res) => {
          if (req.url === '/ok') return void res.end('{"ok":true}');
          res.write('{"part":1}\n'); // and nothing more
        };
        const slow = await transport.requestStreamed('GET', '/slow', { timeoutMs: 100 });
        const read: Buffer[] = [];
        const timedOut = await (async () => {
          for await (const chunk of slow.chunks) read.push(chunk);
        })().catch((e: unknown) => e);
        slow.release();
        assert.equal(Buffer.concat(read).toString(), '{"part":1}\n');
        assert.ok(timedOut instanceof KubeApiError && timedOut.reason === 'Timeout', String(timedOut));

        const abort = new AbortController();
        const reason = new Error('enough');
        const values: unknown[] = [];
        await assert.rejects(async () => {
          for await (const value of transport.stream('/watch', { watch: true }, abort.signal)) {
            values.push(value);
            abort.abort(reason);
          }
        }, reason);
        assert.deepEqual(values, [{ part: 1 }]);
        assert.deepEqual(await transport.json('GET', '/ok'), { ok: true });
      } finally {
        transport.close();
      }
    });
  });
}

describe('Transport over HTTP/2 when the server refuses a stream', () => {
  it('sends a write again once, since the server never processed it', async () => {
    const server = http2.createSecureServer(tlsFiles);
    const seen: string[] = [];
    server.on('stream', (stream, headers) => {
      stream.on('error', () => {}); // the refusal, on the server's side
      seen.push(String(headers[':method']));
      if (seen.length === 1) return stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      stream.respond({ ':status': 201 });
      stream.end('{"created":true}');
    });
    const port = await listen(server);
    const transport = await Transport.fromKubeConfig(kubeConfig(port), { http2: true });
    try {
      assert.deepEqual(await transport.json('POST', '/api/v1/x', { body: {} }), { created: true });
      assert.deepEqual(seen, ['POST', 'POST']);

      // Refused twice: the second refusal is the caller's error.
      seen.length = 0;
      server.removeAllListeners('stream');
      server.on('stream', (stream, headers) => {
        stream.on('error', () => {});
        seen.push(String(headers[':method']));
        stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      });
      const error = await transport.json('POST', '/api/v1/x', { body: {} }).catch((e: unknown) => e);
      assert.ok(error instanceof KubeApiError && error.status === 0, String(error));
      assert.match(error.message, /REFUSED_STREAM/);
      assert.deepEqual(seen, ['POST', 'POST']);
    } finally {
      transport.close();
      server.close();
    }
  });
});

describe('Transport over HTTP/2 when the server resets a stream it was handling', () => {
  it('fails that request and keeps the server reachable: a reset is the server speaking', async () => {
    const server = http2.createSecureServer(tlsFiles);
    server.on('stream', (stream) => {
      stream.on('error', () => {});
      // As kube-apiserver ends a request whose own timeout fired.
      stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    });
    const port = await listen(server);
    const transport = await Transport.fromKubeConfig(kubeConfig(port), { http2: true });
    try {
      const error = await transport.json('PATCH', '/api/v1/x', { body: {} }).catch((e: unknown) => e);
      assert.ok(error instanceof KubeApiError && error.code === 'ERR_HTTP2_STREAM_ERROR', String(error));
      assert.equal(transport.connectivity.isUp, true, 'not taken for unreachable');
    } finally {
      transport.close();
      server.close();
    }
  });
});

describe('Transport to a server whose ALPN offers only HTTP/1.1, with expiring credentials', () => {
  it('does not count the switch to HTTP/1.1 as an attempt: a 401 on the first request still refreshes', async () => {
    const tokenFile = join(dir, 'token-fallback');
    writeFileSync(tokenFile, 'first');
    const tokens: string[] = [];
    const server = https.createServer(tlsFiles, (req, res) => {
      tokens.push(String(req.headers.authorization));
      res.statusCode = req.headers.authorization === 'Bearer second' ? 200 : 401;
      res.end('{}');
    });
    const port = await listen(server);
    const transport = await Transport.fromKubeConfig(kubeConfig(port, execUser(tokenFile)), {
      http2: true,
      authRefreshMs: 3_600_000,
    });
    try {
      writeFileSync(tokenFile, 'second');
      await transport.json('GET', '/api/v1/x');
      assert.deepEqual(tokens, ['Bearer first', 'Bearer second']);
      assert.equal(transport.protocol, 'http/1.1');
    } finally {
      transport.close();
      server.closeAllConnections();
      server.close();
    }
  });
});
