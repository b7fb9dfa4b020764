// Attack c: stalled bodies over HTTP/1.1. 60 TLS connections each announce a 7,000,000-byte
// review (under the 7 MiB cap), send 6.9 MB of it and never the rest. What the server holds
// meanwhile, and whether it drops them (a read timeout) before the hold ends.
import { connect } from 'node:tls';
import { sleep } from '../common.mjs';
import { HOST, seconds, VALIDATE_PATH } from './harness.mjs';

export const DECLARED_BYTES = 7_000_000;
export const SENT_BYTES = 6_900_000;

/** 6.9 MB of the start of a review that never ends. */
export function stalledBody() {
  const body = Buffer.alloc(SENT_BYTES, 'x');
  body.write(
    '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"a","object":{"spec":{"pad":"',
  );
  return body;
}

export const cases = [
  {
    attack: 'stalled-bodies',
    id: '60x6.9MB',
    title: '60 connections × 6.9 MB, never finished',
    run: async ({ port, ca, quick }) => {
      const connections = 60;
      const holdMs = quick ? 15_000 : 35_000;
      const body = stalledBody();
      const head = Buffer.from(
        `POST ${VALIDATE_PATH}?timeout=10s HTTP/1.1\r\nHost: ${HOST}:${port}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${DECLARED_BYTES}\r\n\r\n`,
      );
      const t0 = performance.now();
      const sockets = Array.from({ length: connections }, () => {
        const state = { sentAt: undefined, closedAt: undefined, status: undefined };
        const socket = connect({ host: HOST, port, ca, ALPNProtocols: ['http/1.1'] });
        state.socket = socket;
        socket.on('error', () => {});
        socket.on('data', (chunk) => (state.status ??= chunk.toString('latin1', 9, 12)));
        socket.on('close', () => (state.closedAt ??= performance.now()));
        socket.once('secureConnect', () => {
          socket.write(head);
          socket.write(body, (error) => {
            if (!error) state.sentAt = performance.now();
          });
        });
        return state;
      });
      // Everything written (or refused), then the hold.
      const sendDeadline = t0 + (quick ? 20_000 : 40_000);
      while (
        performance.now() < sendDeadline &&
        sockets.some((s) => s.sentAt === undefined && s.closedAt === undefined)
      ) {
        await sleep(100);
      }
      const sent = sockets.filter((s) => s.sentAt !== undefined);
      const allSentMs = (sent.length ? Math.max(...sent.map((s) => s.sentAt)) : performance.now()) - t0;
      await sleep(holdMs);
      const end = performance.now();
      const closed = sockets.filter((s) => s.closedAt !== undefined);
      const statuses = {};
      for (const s of closed) statuses[s.status ?? 'no answer'] = (statuses[s.status ?? 'no answer'] ?? 0) + 1;
      for (const s of sockets) s.socket.destroy();
      const closedAt = closed.map((s) => s.closedAt - t0).sort((a, b) => a - b);
      return {
        connections,
        fullySent: sent.length,
        closedByServer: closed.length,
        closedAtMs: closedAt,
        statuses,
        summary:
          `${sent.length}/${connections} bodies sent whole (the last at ${seconds(allSentMs)}); ` +
          (closed.length
            ? `${closed.length} closed by the server (${Object.entries(statuses)
                .map(([status, n]) => `${n} × ${status}`)
                .join(', ')}) ${seconds(closedAt[0])}–${seconds(closedAt.at(-1))} after the attack began`
            : 'none closed by the server') +
          `; ${connections - closed.length} still open at ${seconds(end - t0)}`,
      };
    },
  },
];

export const description = {
  attack: 'stalled-bodies',
  title: 'c. stalled bodies (HTTP/1.1)',
  what:
    '60 TLS connections each announce a 7,000,000-byte review, send 6.9 MB of it and never the rest; held 35 s ' +
    '(15 s with --quick) after the last byte.',
  mustHold:
    'Bodies in flight bounded in total; a body that stalls is dropped after a short read timeout (controller-runtime: ' +
    '32 s for headers, 90 s idle).',
};
