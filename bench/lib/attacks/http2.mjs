// Attack d: HTTP/2 (Nestor with webhooks.http2: true, controller-runtime with HTTP/2 on):
// 5,000 idle connections; one body sent one byte every 5 s; one connection with 60
// unfinished 6.9 MB streams. Whether the server closes what stalls, and what it holds.
import { connect } from 'node:http2';
import { connect as tlsConnect } from 'node:tls';
import { sleep } from '../common.mjs';
import { HOST, seconds, VALIDATE_PATH } from './harness.mjs';
import { DECLARED_BYTES, SENT_BYTES, stalledBody } from './stalled-bodies.mjs';

function session(port, ca) {
  const state = { closedAt: undefined, goaway: false };
  const s = connect(`https://${HOST}:${port}`, { ca, peerMaxConcurrentStreams: 1000 });
  state.session = s;
  state.connected = new Promise((resolve) => {
    s.once('connect', () => resolve(true));
    s.once('error', () => resolve(false));
    s.once('close', () => resolve(false));
  });
  s.on('error', () => {});
  s.on('goaway', () => (state.goaway = true));
  s.on('close', () => (state.closedAt ??= performance.now()));
  return state;
}

const idle = {
  attack: 'http2',
  id: 'idle',
  title: '5,000 idle HTTP/2 connections (1,000 with --quick)',
  http2: true,
  run: async ({ port, ca, quick }) => {
    const count = quick ? 1_000 : 5_000;
    const holdMs = quick ? 15_000 : 35_000;
    const sessions = [];
    const t0 = performance.now();
    const openDeadline = t0 + 60_000;
    // 100 handshakes at a time: the attacker's side shares the cores.
    for (let i = 0; i < count && performance.now() < openDeadline; i += 100) {
      const batch = Array.from({ length: Math.min(100, count - i) }, () => session(port, ca));
      sessions.push(...batch);
      await Promise.all(batch.map((s) => s.connected));
    }
    const openMs = performance.now() - t0;
    const opened = (await Promise.all(sessions.map((s) => s.connected))).filter(Boolean).length;
    const heldFrom = performance.now();
    await sleep(holdMs);
    const stillOpen = sessions.filter((s) => s.closedAt === undefined).length;
    for (const s of sessions) s.session.destroy();
    await sleep(500);
    return {
      connections: count,
      opened,
      stillOpen,
      summary: `${opened}/${count} opened in ${seconds(openMs)}; ${stillOpen} still open after ${seconds(performance.now() - heldFrom - 500)} idle`,
    };
  },
};

const slowBody = {
  attack: 'http2',
  id: 'slow-body',
  title: 'one body, one byte every 5 s',
  http2: true,
  run: async ({ port, ca, quick }) => {
    const holdMs = quick ? 20_000 : 40_000;
    const s = session(port, ca);
    await s.connected;
    const t0 = performance.now();
    const stream = s.session.request({
      ':method': 'POST',
      ':path': `${VALIDATE_PATH}?timeout=10s`,
      'content-type': 'application/json',
      'content-length': '100000',
    });
    let status;
    let answeredAt;
    let endedAt;
    stream.on('response', (headers) => {
      status = headers[':status'];
      answeredAt = performance.now();
    });
    stream.on('error', () => {});
    stream.on('close', () => (endedAt ??= performance.now()));
    stream.resume();
    let bytes = 0;
    // Until the server answers (a 408 leaves the client's half open) or ends the stream.
    while (performance.now() - t0 < holdMs && answeredAt === undefined && endedAt === undefined) {
      if (!stream.destroyed) stream.write(bytes === 0 ? '{' : ' ');
      bytes++;
      await sleep(5_000);
    }
    const at = performance.now();
    s.session.destroy();
    const stopped = answeredAt ?? endedAt;
    return {
      bytes,
      status: status ?? null,
      stoppedAfterMs: stopped === undefined ? null : stopped - t0,
      summary:
        stopped === undefined
          ? `still open after ${seconds(at - t0)} (${bytes} bytes sent)`
          : `${status ? `answered ${status}` : 'reset'} by the server after ${seconds(stopped - t0)} (${bytes} bytes sent)`,
    };
  },
};

const streams = {
  attack: 'http2',
  id: '60-streams',
  title: 'one connection, 60 unfinished 6.9 MB streams',
  http2: true,
  run: async ({ port, ca, quick }) => {
    const count = 60;
    const holdMs = quick ? 10_000 : 20_000;
    const body = stalledBody();
    const s = session(port, ca);
    await s.connected;
    const t0 = performance.now();
    const sendDeadline = t0 + (quick ? 20_000 : 40_000);
    const states = Array.from({ length: count }, () => {
      const state = { written: 0, closedAt: undefined, status: undefined, answeredAt: undefined };
      const stream = s.session.request({
        ':method': 'POST',
        ':path': `${VALIDATE_PATH}?timeout=10s`,
        'content-type': 'application/json',
        'content-length': String(DECLARED_BYTES),
      });
      state.stream = stream;
      stream.on('response', (headers) => {
        state.status = headers[':status'];
        state.answeredAt = performance.now();
      });
      stream.on('error', () => {});
      stream.on('close', () => (state.closedAt ??= performance.now()));
      stream.resume();
      state.sending = (async () => {
        for (
          let at = 0;
          at < SENT_BYTES && !stream.destroyed && state.answeredAt === undefined && performance.now() < sendDeadline;
          at += 65_536
        ) {
          const chunk = body.subarray(at, Math.min(SENT_BYTES, at + 65_536));
          if (!stream.write(chunk)) {
            await Promise.race([new Promise((resolve) => stream.once('drain', resolve)), sleep(1_000)]);
          }
          state.written = at + chunk.length;
        }
      })();
      return state;
    });
    await Promise.all(states.map((st) => st.sending));
    const sentMs = performance.now() - t0;
    await sleep(holdMs);
    // Stopped by the server: answered (a 413, 429, 503 or 408 leaves the client's half open) or reset.
    const stopped = states.filter((st) => st.answeredAt !== undefined || st.closedAt !== undefined);
    const statuses = {};
    for (const st of stopped) statuses[st.status ?? 'reset'] = (statuses[st.status ?? 'reset'] ?? 0) + 1;
    const writtenMB = states.reduce((sum, st) => sum + st.written, 0) / 1e6;
    const sessionClosed = s.closedAt !== undefined;
    s.session.destroy();
    return {
      streams: count,
      writtenMB,
      stoppedStreams: stopped.length,
      statuses,
      sessionClosed,
      summary:
        `${writtenMB.toFixed(0)} MB written in ${seconds(sentMs)}; ` +
        (stopped.length
          ? `${stopped.length} streams stopped by the server (${Object.entries(statuses)
              .map(([status, n]) => `${n} × ${status}`)
              .join(', ')})`
          : 'no stream stopped') +
        `${sessionClosed ? ', connection closed' : ''}; ${count - stopped.length} open ${seconds(holdMs)} later`,
    };
  },
};

const http1Slots = {
  attack: 'http2',
  id: 'http1-slots',
  title: '1,024 idle connections that negotiate HTTP/1.1, from five addresses',
  http2: true,
  run: async ({ port, ca, quick }) => {
    const holdMs = quick ? 15_000 : 25_000;
    const sockets = [];
    const t0 = performance.now();
    for (let i = 0; i < 1_024; i += 64) {
      const batch = Array.from({ length: 64 }, (_, k) => {
        const state = { closedAt: undefined };
        state.socket = tlsConnect({
          host: HOST,
          port,
          ca,
          ALPNProtocols: ['http/1.1'],
          localAddress: `127.0.1.${((i + k) % 5) + 1}`,
        });
        state.socket.on('error', () => {});
        state.socket.on('close', () => (state.closedAt ??= performance.now()));
        state.connected = new Promise((resolve) => {
          state.socket.once('secureConnect', () => resolve(true));
          state.socket.once('close', () => resolve(false));
        });
        return state;
      });
      sockets.push(...batch);
      await Promise.all(batch.map((s) => s.connected));
    }
    const opened = sockets.filter((s) => s.closedAt === undefined).length;
    const heldFrom = performance.now();
    await sleep(holdMs);
    const stillOpen = sockets.filter((s) => s.closedAt === undefined).length;
    for (const s of sockets) s.socket.destroy();
    await sleep(500);
    return {
      connections: sockets.length,
      opened,
      stillOpen,
      summary: `${opened}/1024 open after ${seconds(heldFrom - t0)}; ${stillOpen} still open after ${seconds(performance.now() - heldFrom - 500)} idle`,
    };
  },
};

export const cases = [idle, slowBody, streams, http1Slots];

export const description = {
  attack: 'http2',
  title: 'd. HTTP/2',
  what:
    'With HTTP/2 on (Nestor `webhooks.http2: true`, controller-runtime `-http2`): 5,000 idle HTTP/2 connections ' +
    'held 35 s (1,000 for 15 s with --quick); one stream whose body comes one byte every 5 s (40 s; 20 s quick); ' +
    'one connection with 60 streams each announcing 7,000,000 bytes and sending 6.9 MB, held 20 s (10 s quick).',
  mustHold:
    'The same timeouts and limits as HTTP/1.1, per connection and per stream; a bound on concurrent streams per ' +
    'connection (the rapid-reset lesson).',
};
