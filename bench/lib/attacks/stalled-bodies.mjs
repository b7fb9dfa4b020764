// Attack c: stalled bodies. 60 TLS connections each announce a 7,000,000-byte review (under
// the 7 MiB cap), send 6.9 MB of it and never the rest: over HTTP/1.1 to the HTTP/1.1 server,
// and to the HTTP/2 server over HTTP/2 (one stream per connection) and over HTTP/1.1. What the
// server holds meanwhile, and whether it answers or drops every one (a read deadline) before
// the hold ends: held past the 30 s body deadline, so a connection kept past it shows.
import { connect as http2Connect } from 'node:http2';
import { connect } from 'node:tls';
import { sleep } from '../common.mjs';
import { HOST, seconds, VALIDATE_PATH } from './harness.mjs';

export const DECLARED_BYTES = 7_000_000;
export const SENT_BYTES = 6_900_000;
/** Nestor's body deadline (webhooks.bodyTimeoutMs' default): the hold runs past it. */
const BODY_DEADLINE_MS = 30_000;

/** 6.9 MB of the start of a review that never ends. */
export function stalledBody() {
  const body = Buffer.alloc(SENT_BYTES, 'x');
  body.write(
    '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"a","object":{"spec":{"pad":"',
  );
  return body;
}

/** One HTTP/1.1 request over its own TLS connection; `done` when the server closes it. */
function http1Request({ port, ca, body, t0 }) {
  const state = { sentAt: undefined, doneAt: undefined, status: undefined };
  const head = Buffer.from(
    `POST ${VALIDATE_PATH}?timeout=10s HTTP/1.1\r\nHost: ${HOST}:${port}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${DECLARED_BYTES}\r\n\r\n`,
  );
  const socket = connect({ host: HOST, port, ca, ALPNProtocols: ['http/1.1'] });
  socket.on('error', () => {});
  socket.on('data', (chunk) => (state.status ??= chunk.toString('latin1', 9, 12)));
  socket.on('close', () => (state.doneAt ??= performance.now() - t0));
  socket.once('secureConnect', () => {
    state.requestAt = performance.now() - t0;
    socket.write(head);
    socket.write(body, (error) => {
      if (!error) state.sentAt = performance.now() - t0;
    });
  });
  state.destroy = () => socket.destroy();
  return state;
}

/**
 * One HTTP/2 connection with one stream; `done` when the server ends the stream (an answer
 * leaves the client's half open: only a reset or the connection's close ends it).
 */
function http2Request({ port, ca, body, t0 }) {
  const state = { sentAt: undefined, doneAt: undefined, status: undefined, sessionClosedAt: undefined };
  const session = http2Connect(`https://${HOST}:${port}`, { ca });
  session.on('error', () => {});
  session.on('close', () => (state.sessionClosedAt ??= performance.now() - t0));
  state.requestAt = performance.now() - t0;
  const stream = session.request({
    ':method': 'POST',
    ':path': `${VALIDATE_PATH}?timeout=10s`,
    'content-type': 'application/json',
    'content-length': String(DECLARED_BYTES),
  });
  stream.on('response', (headers) => (state.status ??= String(headers[':status'])));
  stream.on('error', () => {});
  stream.on('close', () => (state.doneAt ??= performance.now() - t0));
  stream.resume();
  stream.write(body, (error) => {
    if (!error) state.sentAt = performance.now() - t0;
  });
  state.destroy = () => session.destroy();
  return state;
}

function stalledCase({ id, title, http2Server = false, protocol }) {
  return {
    attack: 'stalled-bodies',
    id,
    title,
    http2: http2Server,
    run: async ({ port, ca, quick }) => {
      const connections = 60;
      const holdUntilMs = quick ? BODY_DEADLINE_MS + 10_000 : BODY_DEADLINE_MS + 30_000;
      const body = stalledBody();
      const t0 = performance.now();
      const open = protocol === 'h2' ? http2Request : http1Request;
      const states = Array.from({ length: connections }, () => open({ port, ca, body, t0 }));
      // Everything written (or refused), then the hold, past the body deadline.
      const sendDeadline = t0 + (quick ? 20_000 : 40_000);
      while (performance.now() < sendDeadline && states.some((s) => s.sentAt === undefined && s.doneAt === undefined)) {
        await sleep(100);
      }
      const sent = states.filter((s) => s.sentAt !== undefined);
      const allSentMs = sent.length ? Math.max(...sent.map((s) => s.sentAt)) : performance.now() - t0;
      await sleep(Math.max(0, t0 + holdUntilMs - performance.now()));
      const endMs = performance.now() - t0;
      const done = states.filter((s) => s.doneAt !== undefined);
      const statuses = {};
      for (const s of done) statuses[s.status ?? 'no answer'] = (statuses[s.status ?? 'no answer'] ?? 0) + 1;
      // How long each request was held after it was sent: still open ones count until the end.
      const longestHeldMs = Math.max(...states.map((s) => (s.doneAt ?? endMs) - (s.requestAt ?? 0)));
      const sessionsOpen = protocol === 'h2' ? states.filter((s) => s.sessionClosedAt === undefined).length : undefined;
      for (const s of states) s.destroy();
      const doneAt = done.map((s) => s.doneAt).sort((a, b) => a - b);
      const what = protocol === 'h2' ? 'streams' : 'connections';
      return {
        connections,
        fullySent: sent.length,
        closedByServer: done.length,
        closedAtMs: doneAt,
        statuses,
        longestHeldMs,
        stillOpen: connections - done.length,
        ...(sessionsOpen === undefined ? {} : { sessionsOpen }),
        summary:
          `${sent.length}/${connections} bodies sent whole (the last at ${seconds(allSentMs)}); ` +
          (done.length
            ? `${done.length} ${what} ended by the server (${Object.entries(statuses)
                .map(([status, n]) => `${n} × ${status}`)
                .join(', ')}) ${seconds(doneAt[0])}–${seconds(doneAt.at(-1))} after the attack began`
            : `no ${what} ended by the server`) +
          `; ${connections - done.length} still open at ${seconds(endMs)} (longest held ${seconds(longestHeldMs)})` +
          (sessionsOpen === undefined ? '' : `; ${sessionsOpen} of ${connections} connections still open`),
      };
    },
  };
}

export const cases = [
  stalledCase({ id: '60x6.9MB', title: '60 connections × 6.9 MB, never finished', protocol: 'http/1.1' }),
  stalledCase({
    id: 'http2-60x6.9MB',
    title: 'HTTP/2 server: 60 connections × one 6.9 MB stream, never finished',
    http2Server: true,
    protocol: 'h2',
  }),
  stalledCase({
    id: 'http2-server-http1-60x6.9MB',
    title: 'HTTP/2 server: 60 HTTP/1.1 connections × 6.9 MB, never finished',
    http2Server: true,
    protocol: 'http/1.1',
  }),
];

export const description = {
  attack: 'stalled-bodies',
  title: 'c. stalled bodies (HTTP/1.1, and the HTTP/2 server over HTTP/2 and HTTP/1.1)',
  what:
    '60 TLS connections each announce a 7,000,000-byte review, send 6.9 MB of it and never the rest (HTTP/2: one ' +
    'stream per connection); held until 60 s after the attack began (40 s with --quick), past the 30 s body deadline.',
  mustHold:
    'Bodies in flight bounded in total; a body that stalls is answered (408, or 503 past the budget) and its ' +
    'connection closed (HTTP/2: its stream reset) within the 30 s body deadline plus 2 s (controller-runtime: 32 s for ' +
    'headers, 90 s idle).',
};
