// The intake's bounds, over real sockets on 127.0.0.1 (a plain HTTP server: TLS changes
// nothing here, and the webhook server's own tests cover it).
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { IntakeRefusal, ReviewIntake, type ReviewBody } from './review-intake.js';

let server: Server;
let port: number;
let intake: ReviewIntake;
const taken: ReviewBody[] = [];
/** Requests whose answer the test holds back, to keep their reviews in flight. */
const held: Array<() => void> = [];
let hold = false;

before(async () => {
  server = createServer((req, res) => {
    intake.read(req).then(
      ({ body, ticket }) => {
        taken.push(body);
        const answer = () => {
          res.once('close', () => ticket.release());
          res.writeHead(200).end(body.refused ? `refused: ${body.refused.message}` : 'ok');
        };
        if (hold) held.push(answer);
        else answer();
      },
      (error: unknown) => {
        // As the webhook server: a refusal's own status, 400 for a body that is not a review.
        const refusal = error instanceof IntakeRefusal ? error : new IntakeRefusal(400, (error as Error).message);
        res.writeHead(refusal.status, { connection: 'close', ...refusal.headers }).end(refusal.message);
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

after(() => {
  server.closeAllConnections();
  server.close();
});

interface Answer {
  status: number;
  text: string;
  headers: IncomingMessage['headers'];
}

/** Sends `parts` of a body, waiting `gapMs` between them; `end: false` leaves the body unfinished. */
function send(
  parts: Array<string | Buffer>,
  options: { gapMs?: number; end?: boolean; length?: number; from?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        agent: false,
        ...(options.from ? { localAddress: options.from } : {}),
        headers: options.length !== undefined ? { 'content-length': options.length } : {},
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.flushHeaders();
    void (async () => {
      for (const part of parts) {
        if (req.destroyed) return;
        req.write(part);
        if (options.gapMs) await new Promise((r) => setTimeout(r, options.gapMs));
      }
      if (options.end !== false) req.end();
    })();
  });
}

describe('ReviewIntake', () => {
  it('parses a body and releases what it held once answered', async () => {
    intake = new ReviewIntake();
    const answer = await send(['{"kind":"AdmissionReview",', '"request":{"uid":"u"}}']);
    assert.equal(answer.status, 200);
    assert.deepEqual(taken.at(-1)?.value, { kind: 'AdmissionReview', request: { uid: 'u' } });
    await waitUntil(() => intake.inFlight.reviews === 0);
    assert.deepEqual(intake.inFlight, { reviews: 0, bytes: 0, values: 0 });
  });

  it('refuses a body past a shape limit unparsed, keeping the envelope to answer in', async () => {
    intake = new ReviewIntake({ maxContainers: 1000 });
    const body = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u2","object":[${'[],'.repeat(5000)}[]]}}`;
    const answer = await send([body]);
    assert.equal(answer.status, 200);
    const last = taken.at(-1)!;
    assert.match(last.refused?.message ?? '', /more than 1000 objects and arrays/);
    assert.deepEqual(last.refused ? last.envelope : undefined, {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      uid: 'u2',
    });
  });

  it('refuses a review of more values than the limit unparsed, whatever their type', async () => {
    intake = new ReviewIntake({ maxValues: 10_000 });
    const numbers = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u3","object":[${'1,'.repeat(20_000)}1]}}`;
    assert.equal((await send([numbers])).status, 200);
    assert.match(taken.at(-1)?.refused?.message ?? '', /more than 10000 values and keys/);
    await waitUntil(() => intake.inFlight.reviews === 0);
    assert.deepEqual(intake.inFlight, { reviews: 0, bytes: 0, values: 0 });
  });

  it('answers 503 when the reviews in flight hold their values budget, and counts them back once answered', async () => {
    intake = new ReviewIntake({ maxValuesInFlight: 20_000, bodyIdleTimeoutMs: 60_000 });
    hold = true;
    // 6,000 values each: one address may hold 10,000, so its second review does not fit.
    const review = `{"request":{"uid":"v","object":[${'0,'.repeat(5_995)}0]}}`;
    const first = send([review], { from: '127.0.0.3' });
    await waitUntil(() => held.length === 1);
    assert.ok(intake.inFlight.values >= 6_000, `holds ${intake.inFlight.values} values`);
    const second = await send([review], { from: '127.0.0.3' });
    assert.equal(second.status, 503);
    assert.equal(second.headers['retry-after'], '1');
    // Another address still gets its review in.
    const other = send([review], { from: '127.0.0.4' });
    await waitUntil(() => held.length === 2);
    hold = false;
    for (const answer of held.splice(0)) answer();
    assert.equal((await first).status, 200);
    assert.equal((await other).status, 200);
    await waitUntil(() => intake.inFlight.reviews === 0);
    assert.equal(intake.inFlight.values, 0);
  });

  it('answers 413 to a body over the size limit, declared or sent', async () => {
    intake = new ReviewIntake({ maxBodyBytes: 1000 });
    assert.equal((await send(['{}'], { length: 5000, end: false })).status, 413);
    assert.equal((await send([Buffer.alloc(600, 0x20), Buffer.alloc(600, 0x20)])).status, 413);
  });

  it('answers 429 with Retry-After past the reviews in flight, and takes reviews again once they are answered', async () => {
    // Two per client address (half of the bound); this test's client is one address.
    intake = new ReviewIntake({ maxReviewsInFlight: 4 });
    hold = true;
    const first = [send(['{}']), send(['{}'])];
    await waitUntil(() => held.length === 2);
    const third = await send(['{}']);
    assert.equal(third.status, 429);
    assert.equal(third.headers['retry-after'], '1');
    hold = false;
    for (const answer of held.splice(0)) answer();
    await Promise.all(first);
    await waitUntil(() => intake.inFlight.reviews === 0);
    assert.equal((await send(['{}'])).status, 200);
  });

  it('answers 503 with Retry-After when the bodies in flight hold their byte budget, never more', async () => {
    intake = new ReviewIntake({ maxBodyBytes: 4096, maxBodyBytesInFlight: 10_000, bodyIdleTimeoutMs: 60_000 });
    // One client address holds at most half the budget: the second stalled body is refused.
    const stalled = [1, 2, 3, 4].map(() => send([Buffer.alloc(3000, 0x20)], { end: false, from: '127.0.0.2' }));
    const refused = await Promise.race(stalled);
    assert.equal(refused.status, 503);
    assert.equal(refused.headers['retry-after'], '1');
    assert.ok(intake.inFlight.bytes <= 5_000, `holds ${intake.inFlight.bytes} bytes`);
    // Another address still gets its review in.
    assert.equal((await send(['{"kind":"AdmissionReview"}'])).status, 200);
    server.closeAllConnections();
    await Promise.allSettled(stalled);
    await waitUntil(() => intake.inFlight.bytes === 0 && intake.inFlight.reviews === 0);
  });

  it('reserves a declared length whole, and refuses unread a body that would not fit', async () => {
    intake = new ReviewIntake({ maxBodyBytes: 4096, maxBodyBytesInFlight: 8192, bodyIdleTimeoutMs: 60_000 });
    const first = send(['{'], { length: 4000, end: false, from: '127.0.0.2' });
    await waitUntil(() => intake.inFlight.bytes === 4000);
    // 4,000 + 4,000 > the 4,096 one address may hold: refused before any of it is read.
    const second = await send([], { length: 4000, end: false, from: '127.0.0.2' });
    assert.equal(second.status, 503);
    assert.equal(intake.inFlight.bytes, 4000);
    server.closeAllConnections();
    await first.catch(() => undefined);
    await waitUntil(() => intake.inFlight.bytes === 0 && intake.inFlight.reviews === 0);
  });

  it('drops a body that stalls, and one that drips past its deadline, with 408', async () => {
    intake = new ReviewIntake({ bodyIdleTimeoutMs: 200, bodyTimeoutMs: 60_000 });
    const stalled = await send(['{"a":'], { end: false });
    assert.equal(stalled.status, 408);
    assert.match(stalled.text, /no body bytes for 200 ms/);
    intake = new ReviewIntake({ bodyIdleTimeoutMs: 1_000, bodyTimeoutMs: 500 });
    const dripping = await send(
      Array.from({ length: 100 }, () => ' '),
      { gapMs: 50, end: false },
    );
    assert.equal(dripping.status, 408);
    assert.match(dripping.text, /not complete after 500 ms/);
    await waitUntil(() => intake.inFlight.reviews === 0);
  });

  it('answers 400 with JSON.parse’s reason for a body that is not JSON', async () => {
    intake = new ReviewIntake();
    hold = false;
    const answer = await send(['{"a":']);
    assert.equal(answer.status, 400);
    assert.match(answer.text, /the body is not JSON/);
  });
});

async function waitUntil(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
