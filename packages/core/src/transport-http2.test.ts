import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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

function kubeConfig(port: number): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, caData: tlsFiles.cert.toString('base64') }],
    users: [{ name: 'u', token: 'secret' }],
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

  it('uses HTTP/1.1 unless told to use HTTP/2', async () => {
    const transport = await Transport.fromKubeConfig(kubeConfig(port));
    try {
      assert.equal((await transport.json<{ version: string }>('GET', '/api/v1/x')).version, '1.1');
      assert.equal(transport.protocol, 'http/1.1');
    } finally {
      transport.close();
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
