// Review bodies that stall, sent to the webhook server's real sockets, many at once, on the
// HTTP/1.1 server and on the HTTP/2 server over both protocols: each is answered (408 at the
// body deadline, or 503 past the byte budget) and its connection closed, or its HTTP/2 stream
// reset, within the deadline and a second (issue 44: on the HTTP/2 server such streams, and
// their connections, stayed open for good). The deadlines are shortened so it runs in seconds.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect as http2Connect, type ClientHttp2Session } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { after, describe, it } from 'node:test';
import { selfSignedCertificate } from '@nestor/core';
import { freePort, waitFor } from '@nestor/testing';
import { http1Limits, WEBHOOK_HEADERS_TIMEOUT_MS, WEBHOOK_IDLE_TIMEOUT_MS } from '../webhooks/connection-limits.js';
import { DEFAULT_BODY_TIMEOUT_MS } from '../webhooks/review-intake.js';
import { WebhookHttpsServer, type WebhookHttpsServerOptions } from './webhook-https-server.js';

const pair = selfSignedCertificate({ hosts: ['127.0.0.1'] });
const certDir = mkdtempSync(join(tmpdir(), 'nestor-stalled-bodies-'));
writeFileSync(join(certDir, 'tls.crt'), pair.cert);
writeFileSync(join(certDir, 'tls.key'), pair.key);
after(() => rmSync(certDir, { recursive: true, force: true }));

const PATH = '/validate-example-com-v1-widget';
const DEADLINE_MS = 2_000;
/**
 * The server closes within a second of its 408 (the lingering close); the rest is for 60 TLS
 * handshakes on a loaded machine (a connection whose handshake ends late starts its deadline
 * late). Still far below what the fixed bug left open (streams open for good, > 40 s).
 */
const SLACK_MS = 8_000;
const MIB = 1024 * 1024;
/** Half the bodies declare this length; all send half of it and never the rest. */
const DECLARED = MIB;
const BODY = Buffer.alloc(DECLARED / 2, 0x20);

async function serving(options: WebhookHttpsServerOptions): Promise<WebhookHttpsServer> {
  // 2 MiB bodies, 4 MiB in flight from one address: most of 60 bodies are refused (503), before
  // or while they are read, and the rest stall while held.
  const server = new WebhookHttpsServer({
    host: '127.0.0.1',
    port: await freePort(),
    certDir,
    maxBodyBytes: 2 * MIB,
    maxBodyBytesInFlight: 8 * MIB,
    ...options,
  });
  server.validating({ group: 'example.com', version: 'v1', kind: 'Widget' }, { create: () => {} });
  await server.start();
  return server;
}

/** One request whose body stalls: the status answered (if read), and whether the server ended it. */
interface Stalled {
  status?: string;
  ended: boolean;
}

/** `count` HTTP/1.1 connections, each sending a review's headers and half its body: even ones chunked. */
function stallHttp1(port: number, count: number): { requests: Stalled[]; stop(): void } {
  const sockets = Array.from({ length: count }, (_, i) => {
    const request: Stalled = { ended: false };
    const socket = tlsConnect({ host: '127.0.0.1', port, ca: pair.cert, ALPNProtocols: ['http/1.1'] });
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => (request.status ??= chunk.toString('latin1', 9, 12)));
    socket.on('close', () => (request.ended = true));
    socket.once('secureConnect', () => {
      const length = i % 2 ? `content-length: ${DECLARED}` : 'transfer-encoding: chunked';
      socket.write(`POST ${PATH} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n${length}\r\n\r\n`);
      socket.write(i % 2 ? BODY : Buffer.concat([Buffer.from(`${BODY.length.toString(16)}\r\n`), BODY]));
    });
    return { request, socket };
  });
  return { requests: sockets.map((s) => s.request), stop: () => sockets.forEach((s) => s.socket.destroy()) };
}

/** `count` HTTP/2 connections with `streams` requests each, sending headers and half a body: even ones of no declared length. */
function stallHttp2(
  port: number,
  count: number,
  streams: number,
): { requests: Stalled[]; sessionsOpen(): number; stop(): void } {
  const sessions: ClientHttp2Session[] = [];
  const requests: Stalled[] = [];
  let closed = 0;
  for (let i = 0; i < count; i++) {
    const session = http2Connect(`https://127.0.0.1:${port}`, { ca: pair.cert });
    session.on('error', () => {});
    session.once('close', () => closed++);
    sessions.push(session);
    for (let k = 0; k < streams; k++) {
      const request: Stalled = { ended: false };
      const declared = (i + k) % 2 ? { 'content-length': String(DECLARED) } : {};
      const stream = session.request({
        ':method': 'POST',
        ':path': PATH,
        'content-type': 'application/json',
        ...declared,
      });
      stream.on('response', (headers) => (request.status ??= String(headers[':status'])));
      stream.on('error', () => {});
      // An answer leaves the client's half open: only the server's reset (or the connection's end) closes it.
      stream.on('close', () => (request.ended = true));
      stream.resume();
      stream.write(BODY);
      requests.push(request);
    }
  }
  return { requests, sessionsOpen: () => count - closed, stop: () => sessions.forEach((s) => s.destroy()) };
}

const statusesOf = (requests: Stalled[]) => requests.map((r) => r.status ?? 'none').join(',');

/** True once the server ended every request; else throws what is left, for waitFor's failure. */
function ended(requests: Stalled[]): true {
  const open = requests.filter((r) => !r.ended);
  if (open.length === 0) return true;
  throw new Error(`${open.length} of ${requests.length} still open, answered ${statusesOf(open)}`);
}

describe('stalled review bodies', () => {
  it('HTTP/1.1: 60 stalled bodies at once, each answered and its connection closed by the deadline', async () => {
    const server = await serving({ bodyTimeoutMs: DEADLINE_MS });
    const { requests, stop } = stallHttp1(server.port!, 60);
    try {
      await waitFor(() => ended(requests), {
        timeoutMs: DEADLINE_MS + SLACK_MS,
        what: '60 stalled HTTP/1.1 bodies answered and their connections closed',
      });
      // A refusal's answer may be lost to the reset of the unread bytes behind it; a stalled
      // body, read whole, gets its 408.
      assert.ok(
        requests.some((r) => r.status === '408'),
        statusesOf(requests),
      );
      assert.ok(
        requests.every((r) => [undefined, '408', '503'].includes(r.status)),
        statusesOf(requests),
      );
      assert.deepEqual(server.inFlight, { reviews: 0, bytes: 0, values: 0 });
    } finally {
      stop();
      await server.stop();
    }
  });

  it('HTTP/2: 60 stalled streams on 30 connections, each answered and reset by the deadline, the connections closed once idle', async () => {
    const server = await serving({ http2: true, bodyTimeoutMs: DEADLINE_MS });
    const { requests, sessionsOpen, stop } = stallHttp2(server.port!, 30, 2);
    try {
      await waitFor(() => ended(requests), {
        timeoutMs: DEADLINE_MS + SLACK_MS,
        what: '60 stalled HTTP/2 streams answered and reset',
      });
      assert.ok(
        requests.some((r) => r.status === '408'),
        statusesOf(requests),
      );
      assert.ok(
        requests.some((r) => r.status === '503'),
        statusesOf(requests),
      );
      assert.ok(
        requests.every((r) => r.status === '408' || r.status === '503'),
        statusesOf(requests),
      );
      assert.deepEqual(server.inFlight, { reviews: 0, bytes: 0, values: 0 });
      await waitFor(() => sessionsOpen() === 0 && server.http2Sessions === 0, {
        timeoutMs: WEBHOOK_IDLE_TIMEOUT_MS + SLACK_MS,
        what: 'the idle HTTP/2 connections closed',
      });
    } finally {
      stop();
      await server.stop();
    }
  });

  it('HTTP/2 server: 60 stalled bodies over HTTP/1.1, each answered and its connection closed by the deadline', async () => {
    const server = await serving({ http2: true, bodyTimeoutMs: DEADLINE_MS });
    const { requests, stop } = stallHttp1(server.port!, 60);
    try {
      await waitFor(() => ended(requests), {
        timeoutMs: DEADLINE_MS + SLACK_MS,
        what: '60 stalled HTTP/1.1 bodies answered and their connections closed',
      });
      assert.ok(
        requests.some((r) => r.status === '408'),
        statusesOf(requests),
      );
      assert.deepEqual(server.inFlight, { reviews: 0, bytes: 0, values: 0 });
    } finally {
      stop();
      await server.stop();
    }
  });

  for (const http2 of [false, true]) {
    it(`${http2 ? 'HTTP/2' : 'HTTP/1.1'}: a body silent for the idle timeout is answered 408 and dropped, long before the deadline`, async () => {
      const server = await serving({ http2, bodyIdleTimeoutMs: 1_000 });
      const { requests, stop } = http2 ? stallHttp2(server.port!, 2, 2) : stallHttp1(server.port!, 4);
      try {
        await waitFor(() => ended(requests), {
          timeoutMs: 1_000 + SLACK_MS,
          what: '4 silent bodies answered and dropped',
        });
        assert.ok(
          requests.every((r) => r.status === '408'),
          statusesOf(requests),
        );
      } finally {
        stop();
        await server.stop();
      }
    });
  }

  it('has one deadline per request: Node’s HTTP/1.1 request deadline is the body deadline (at least the headers timeout)', () => {
    assert.equal(http1Limits().requestTimeout, DEFAULT_BODY_TIMEOUT_MS);
    assert.equal(http1Limits(60_000).requestTimeout, 60_000);
    assert.equal(http1Limits(DEADLINE_MS).requestTimeout, WEBHOOK_HEADERS_TIMEOUT_MS);
  });

  it('refuses a body deadline that is not a positive duration, naming the option', () => {
    assert.throws(() => new WebhookHttpsServer({ bodyTimeoutMs: 0 }), /webhooks\.bodyTimeoutMs must be .*, got 0/);
    assert.throws(() => new WebhookHttpsServer({ bodyIdleTimeoutMs: Number.NaN }), /webhooks\.bodyIdleTimeoutMs/);
  });
});
