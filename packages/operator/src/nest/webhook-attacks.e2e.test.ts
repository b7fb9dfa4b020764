// The webhook port under attack, as anyone who reaches it from inside the cluster could
// send it (it has no authentication, as in every framework): each attack of issue 25 sent
// to the real server, asserting what must hold while a legitimate client keeps sending
// reviews. How long things took is measured by `npm run attack`, not asserted here.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { connect, constants, type ClientHttp2Session } from 'node:http2';
import { request } from 'node:https';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import type { INestApplicationContext } from '@nestjs/common';
import { freePort, TestEnvironment, waitFor, type LocalWebhooks } from '@nestor/testing';
import { Default, ValidateCreate, Webhook, webhookConfigurationsOf, WebhookServer } from '../index.js';
import { bootOperatorApp } from '../test-support/operator-app.js';
import { requestOnce } from '../test-support/request-once.js';
import { WIDGET_CRD, Widget, widget } from '../test-support/widget.js';

const SUFFIX = randomBytes(3).toString('hex');
const NS = `attacks-${SUFFIX}`;
const VALIDATE = '/validate-test-nestor-dev-v1-widget';
const MUTATE = '/mutate-test-nestor-dev-v1-widget';

@Webhook(Widget, { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } } })
class WidgetWebhook {
  /** The specs the validator saw, by object name. */
  readonly seen = new Map<string, Record<string, unknown>>();

  @ValidateCreate()
  create(object: Widget): void {
    this.seen.set(object.metadata.name ?? '', object.spec as unknown as Record<string, unknown>);
  }

  @Default()
  defaults(object: Widget): void {
    object.spec.mode ??= 'standard';
  }
}

let env: TestEnvironment;
let webhooks: LocalWebhooks;
let http1: INestApplicationContext | undefined;
let http2: INestApplicationContext | undefined;
let http2Port: number;

before(async () => {
  env = await TestEnvironment.start({ crds: [WIDGET_CRD] });
  await env.client.request('POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: NS },
  });
  webhooks = await env.installWebhooks({
    configurations: webhookConfigurationsOf([WidgetWebhook], { name: `attacks-${SUFFIX}` }),
  });
  http1 = await bootOperatorApp({
    kubeConfig: env.kubeConfig,
    namespace: NS,
    providers: [WidgetWebhook],
    webhooks: { host: webhooks.host, port: webhooks.port, certDir: webhooks.certDir },
  });
  http2Port = await freePort();
  http2 = await bootOperatorApp({
    kubeConfig: env.kubeConfig,
    namespace: NS,
    providers: [WidgetWebhook],
    webhooks: { host: webhooks.host, port: http2Port, certDir: webhooks.certDir, http2: true },
  });
});

after(async () => {
  await http1?.close();
  await http2?.close();
  await webhooks?.uninstall();
  await env.client.request('DELETE', `/api/v1/namespaces/${NS}`).catch(() => undefined);
  await env.stop();
});

/** An AdmissionReview of a CREATE of `object`, as the API server sends it. */
function review(object: unknown, uid: string = randomUUID()): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: 'test.nestor.dev', version: 'v1', kind: 'Widget' },
      resource: { group: 'test.nestor.dev', version: 'v1', resource: 'widgets' },
      operation: 'CREATE',
      namespace: NS,
      name: 'w',
      userInfo: { username: 'attacker' },
      object,
    },
  });
}

interface Answer {
  status: number;
  text: string;
  response?: {
    uid: string;
    allowed: boolean;
    status?: { code: number; message: string; reason?: string };
    patch?: string;
  };
}

function answerOf(status: number, text: string): Answer {
  try {
    return { status, text, response: (JSON.parse(text) as { response: Answer['response'] }).response };
  } catch {
    return { status, text };
  }
}

/** One review over its own HTTP/1.1 connection. */
function post(path: string, body: string | Buffer, port = webhooks.port): Promise<Answer> {
  return requestOnce({ host: webhooks.host, port, path, body, ca: webhooks.caCertificate }).then(({ status, text }) =>
    answerOf(status, text),
  );
}

/**
 * A legitimate client: a normal review every 100 ms until stopped; resolves to how many
 * were sent and how many allowed.
 */
function legitimateClient(port = webhooks.port): { stop: () => Promise<{ sent: number; allowed: number }> } {
  let running = true;
  let sent = 0;
  let allowed = 0;
  const loop = (async () => {
    while (running) {
      sent++;
      const answer = await post(VALIDATE, review(widget(NS, `legit-${sent}`, { size: 1 })), port).catch(
        () => undefined,
      );
      if (answer?.response?.allowed) allowed++;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { sent, allowed };
    },
  };
}

/** Peak RSS of this process (the server runs in it) while `work` runs, above what it was before. */
async function rssGrowth(work: () => Promise<void>): Promise<number> {
  const before = process.memoryUsage.rss();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
  try {
    await work();
  } finally {
    clearInterval(sampler);
  }
  return Math.max(peak, process.memoryUsage.rss()) - before;
}

const MB = 1024 * 1024;

/** The webhook server of an app, for its in-flight counts. */
const serverOf = (app: INestApplicationContext | undefined) => app!.get(WebhookServer);

describe('the webhook port under attack', () => {
  it('refuses reviews of millions of nested empty arrays unparsed, four at once, with a denial and bounded memory', async () => {
    // 7.2 MB, under the 7 MiB cap: 3.6 million empty arrays, which JSON.parse turns into ~400 MB.
    const body = Buffer.from(
      review({ ...widget(NS, 'arrays'), spec: { size: 1, list: new Array(2_399_000).fill([]) } }),
    );
    assert.ok(body.length < 7 * MB);
    const legitimate = legitimateClient();
    let answers: Answer[] = [];
    const growth = await rssGrowth(async () => {
      answers = await Promise.all([1, 2, 3, 4].map(() => post(VALIDATE, body)));
    });
    const { sent, allowed } = await legitimate.stop();
    for (const answer of answers) {
      assert.equal(answer.status, 200);
      assert.equal(answer.response?.allowed, false);
      assert.equal(answer.response?.status?.code, 400);
      assert.match(answer.response?.status?.message ?? '', /more than 250000 objects and arrays/);
    }
    // Four parsed would take over 1.2 GB; refused unparsed, the bodies themselves are what is held.
    assert.ok(growth < 160 * MB, `RSS grew by ${Math.round(growth / MB)} MB`);
    assert.equal(allowed, sent, `${sent - allowed} of ${sent} legitimate reviews were not allowed meanwhile`);
  });

  it('denies an object nested 2,000 deep through the defaulting webhook, naming the limit', async () => {
    let nested: unknown = 'bottom';
    for (let i = 0; i < 2_000; i++) nested = { next: nested };
    const answer = await post(MUTATE, review({ ...widget(NS, 'deep'), spec: { size: 1, nested } }));
    assert.equal(answer.status, 200);
    assert.equal(answer.response?.allowed, false);
    assert.equal(answer.response?.status?.code, 400);
    assert.equal(answer.response?.status?.reason, 'BadRequest');
    assert.match(answer.response?.status?.message ?? '', /more than 1000 deep/);
  });

  it('keeps a __proto__ field as data: the validator sees it, the defaulter’s patch leaves it', async () => {
    const object = JSON.parse(
      `{"apiVersion":"test.nestor.dev/v1","kind":"Widget","metadata":{"name":"proto","namespace":"${NS}"},"spec":{"size":1,"__proto__":{"mode":"polluted"}}}`,
    ) as unknown;
    const validated = await post(VALIDATE, review(object));
    assert.equal(validated.response?.allowed, true);
    const spec = http1!.get(WidgetWebhook).seen.get('proto');
    assert.ok(spec && Object.hasOwn(spec, '__proto__'), 'the validator did not see __proto__ as a field');
    assert.equal(Object.getPrototypeOf(spec), Object.prototype);
    assert.equal((spec as { mode?: string }).mode, undefined);
    const defaulted = await post(MUTATE, review(object));
    assert.equal(defaulted.response?.allowed, true);
    const patch = JSON.parse(Buffer.from(defaulted.response?.patch ?? '', 'base64').toString()) as unknown[];
    // `mode` was absent (not inherited from a polluted prototype), so the defaulter set it.
    assert.deepEqual(patch, [{ op: 'add', path: '/spec/mode', value: 'standard' }]);
  });

  it('holds stalled bodies within the byte budget and drops them when they stall, still answering others', async () => {
    const server = serverOf(http1);
    const legitimate = legitimateClient();
    const chunk = Buffer.alloc(2 * MB, 0x20);
    const stalled: Array<Promise<number>> = [];
    for (let i = 0; i < 60; i++) {
      stalled.push(
        new Promise((resolve) => {
          const req = request({
            host: webhooks.host,
            port: webhooks.port,
            path: VALIDATE,
            method: 'POST',
            ca: webhooks.caCertificate,
            headers: { 'content-type': 'application/json', 'content-length': Math.floor(6.9 * MB) },
            agent: false,
            // Another peer than the legitimate client's, as a pod is another address than the API server.
            localAddress: '127.0.0.2',
          });
          req.on('response', (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          });
          req.on('error', () => resolve(0)); // dropped without an answer
          req.write(chunk); // and never the rest
        }),
      );
    }
    let peakBytes = 0;
    const sampler = setInterval(() => (peakBytes = Math.max(peakBytes, server.inFlight.bytes)), 10);
    const statuses = await Promise.all(stalled);
    clearInterval(sampler);
    const { sent, allowed } = await legitimate.stop();
    // The attacking address holds at most half of the 64 MiB budget; the legitimate client's
    // reviews (a few KB) are counted in the same total.
    assert.ok(peakBytes <= 33 * MB, `${Math.round(peakBytes / MB)} MB of bodies held at once`);
    // Beyond the budget: 503, retried by the API server; the rest dropped for stalling (408).
    assert.ok(statuses.includes(503), `statuses: ${statuses.join(',')}`);
    assert.ok(
      statuses.every((status) => status === 503 || status === 408 || status === 0),
      `statuses: ${statuses.join(',')}`,
    );
    await waitFor(() => server.inFlight.reviews === 0 && server.inFlight.bytes === 0, {
      timeoutMs: 30_000,
      what: 'the intake to release every stalled body',
    });
    assert.equal(allowed, sent, `${sent - allowed} of ${sent} legitimate reviews were not allowed meanwhile`);
  });

  it('refuses a review of millions of plain numbers unparsed, four at once, with a denial and bounded memory', async () => {
    // 3.5 million numbers: two bytes each, no container among them, under the body cap.
    const body = review(widget(NS, 'numbers', { size: 1, items: '@ITEMS@' } as never)).replace(
      '"@ITEMS@"',
      `[${'1,'.repeat(3_500_000)}1]`,
    );
    const legit = legitimateClient();
    let answers: Answer[] = [];
    const growth = await rssGrowth(async () => {
      answers = await Promise.all(
        ['127.0.0.5', '127.0.0.6', '127.0.0.7', '127.0.0.8'].map((from) =>
          requestOnce({
            host: webhooks.host,
            port: webhooks.port,
            path: VALIDATE,
            body,
            ca: webhooks.caCertificate,
            localAddress: from,
          }).then(({ status, text }) => answerOf(status, text)),
        ),
      );
    });
    const { sent, allowed } = await legit.stop();
    // Each is refused unparsed: denied, naming the limit, or (while the others' values, not yet
    // past it, fill what the reviews in flight may hold) 503, which the API server retries.
    for (const answer of answers) {
      if (answer.status === 503) continue;
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.response?.allowed, false);
      assert.match(answer.response?.status?.message ?? '', /more than 1000000 values and keys/);
    }
    assert.ok(
      answers.some((answer) => answer.status === 200),
      `no review denied: ${answers.map((a) => a.status).join(', ')}`,
    );
    // Parsed, four such reviews grew RSS by 1.7 GB (one alone by 460 MB); refused unparsed, by
    // what this process's client side holds (the bodies it sends) and the server's scan.
    assert.ok(growth < 160 * MB, `RSS grew ${(growth / MB).toFixed(0)} MB`);
    assert.equal(allowed, sent, `${sent - allowed} of ${sent} legitimate reviews were not allowed meanwhile`);
  });

  it('HTTP/2 server: closes connections that negotiate HTTP/1.1 when silent, trickling headers, or idle', async () => {
    const tls = (): Promise<TLSSocket> =>
      new Promise((resolve, reject) => {
        const socket = tlsConnect({
          host: webhooks.host,
          port: http2Port,
          ca: webhooks.caCertificate,
          ALPNProtocols: ['http/1.1'],
        });
        socket.once('secureConnect', () => resolve(socket));
        socket.once('error', reject);
      });
    const open = new Set<string>();
    const watch = (name: string, socket: TLSSocket) => {
      open.add(name);
      socket.once('close', () => open.delete(name));
    };
    const silent = await tls();
    const trickling = await tls();
    assert.equal(trickling.alpnProtocol, 'http/1.1');
    trickling.on('error', () => {});
    trickling.write('POST /validate HTTP/1.1\r\n');
    const drip = setInterval(() => trickling.writable && trickling.write('x-slow: a\r\n'), 1_000);
    const keptAlive = await tls();
    keptAlive.resume(); // its answer read, so that its close is seen
    keptAlive.write(`GET / HTTP/1.1\r\nhost: localhost\r\n\r\n`);
    watch('silent', silent);
    watch('trickling', trickling);
    watch('kept alive', keptAlive);
    // The limits are 10 s for headers and 5 s idle (checked each second); Node's own for these
    // connections are 60 s for headers, checked every 30 s.
    await waitFor(() => open.size === 0, {
      timeoutMs: 25_000,
      what: 'the HTTP/2 server to close silent, trickling and idle HTTP/1.1 connections',
    }).catch((error: Error) => {
      throw new Error(`${error.message}: still open: ${[...open].join(', ')}`);
    });
    clearInterval(drip);
  });

  it('HTTP/2 server: a handful of addresses holding every slot with idle connections cannot lock out a review', async () => {
    // 1,024 slots, 256 per address: five addresses fill them all with connections that do nothing.
    const sockets: Socket[] = [];
    let refused = 0;
    for (let peer = 0; peer < 5; peer++) {
      for (let n = 0; n < 210; n++) {
        const socket = netConnect({ host: webhooks.host, port: http2Port, localAddress: `127.0.1.${peer + 1}` });
        socket.on('error', () => {});
        socket.once('close', () => refused++);
        sockets.push(socket);
      }
    }
    await waitFor(() => sockets.every((socket) => socket.readyState !== 'opening'), {
      timeoutMs: 10_000,
      what: '1,050 connections to open',
    });
    // Over HTTP/1.1 and over HTTP/2, from an address of its own.
    const h1 = await post(VALIDATE, review(widget(NS, 'beside-full-h1', { size: 1 })), http2Port);
    assert.equal(h1.response?.allowed, true);
    const session = connect(`https://${webhooks.host}:${http2Port}`, { ca: webhooks.caCertificate });
    session.on('error', () => {});
    const h2 = await new Promise<string>((resolve, reject) => {
      const stream = session.request({ ':method': 'POST', ':path': VALIDATE, 'content-type': 'application/json' });
      let text = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => (text += chunk));
      stream.on('end', () => resolve(text));
      stream.on('error', reject);
      stream.end(review(widget(NS, 'beside-full-h2', { size: 1 })));
    });
    session.destroy();
    assert.equal(answerOf(200, h2).response?.allowed, true);
    // The server accepts connections as it gets to them: 26 over the 1,024 slots are closed, evicted or refused.
    await waitFor(() => refused >= 1_050 - 1_024, {
      timeoutMs: 10_000,
      what: `26 connections closed (${refused} so far)`,
    });
    for (const socket of sockets) socket.destroy();
  });

  it('caps the connections one address keeps open, and still answers another', async () => {
    // Plain TCP connections that never start TLS: the cap acts before any handshake.
    let closed = 0;
    const sockets = Array.from({ length: 300 }, () => {
      const socket = netConnect({ host: webhooks.host, port: webhooks.port, localAddress: '127.0.0.2' });
      socket.on('error', () => {});
      socket.once('close', () => closed++);
      return socket;
    });
    await waitFor(() => closed >= 300 - 256, {
      timeoutMs: 10_000,
      what: 'the server to close the connections past 256 from one address',
    });
    const answer = await post(VALIDATE, review(widget(NS, 'beside-the-cap', { size: 1 })));
    assert.equal(answer.response?.allowed, true);
    assert.ok(closed <= 300 - 256 + 5, `${closed} closed: the cap is per address, not lower`);
    for (const socket of sockets) socket.destroy();
  });

  it('HTTP/2: closes idle connections, caps streams per connection, drops a dripping body', async () => {
    const server = serverOf(http2);
    const url = `https://${webhooks.host}:${http2Port}`;
    const open = (): Promise<ClientHttp2Session> =>
      new Promise((resolve, reject) => {
        const session = connect(url, { ca: webhooks.caCertificate });
        session.once('connect', () => resolve(session));
        session.once('error', reject);
      });
    // Idle connections that never open a stream.
    const idle = await Promise.all(Array.from({ length: 100 }, open));
    await waitFor(() => idle.every((session) => session.closed || session.destroyed), {
      timeoutMs: 30_000,
      what: 'the server to close 100 idle HTTP/2 connections',
    });
    // One connection, 60 streams with unfinished bodies: at most 32 open at once.
    const session = await open();
    session.on('error', () => {});
    const results = await Promise.all(
      Array.from(
        { length: 60 },
        () =>
          new Promise<string>((resolve) => {
            const stream = session.request({
              ':method': 'POST',
              ':path': VALIDATE,
              'content-type': 'application/json',
            });
            stream.on('response', (headers) => resolve(String(headers[':status'])));
            stream.on('error', (error: Error) => resolve(error.message));
            stream.on('close', () =>
              resolve(stream.rstCode === constants.NGHTTP2_REFUSED_STREAM ? 'refused' : 'closed'),
            );
            stream.write(Buffer.alloc(256 * 1024, 0x20));
          }),
      ),
    );
    session.destroy();
    const refused = results.filter((result) => result === 'refused' || result.includes('REFUSED')).length;
    assert.ok(refused >= 60 - 32, `only ${refused} of 60 streams refused: ${results.join(',')}`);
    // A body that drips one byte a second is dropped at its deadline, whatever it keeps sending.
    const dripping = await open();
    dripping.on('error', () => {});
    const stream = dripping.request({ ':method': 'POST', ':path': VALIDATE, 'content-type': 'application/json' });
    const drip = setInterval(() => stream.writable && stream.write(' '), 1_000);
    const status = await new Promise<string>((resolve) => {
      stream.on('response', (headers) => resolve(String(headers[':status'])));
      stream.on('close', () => resolve('closed'));
      stream.on('error', () => resolve('error'));
    });
    clearInterval(drip);
    dripping.destroy();
    assert.ok(status === '408' || status === 'closed', `status ${status}`);
    await waitFor(() => server.inFlight.reviews === 0, { timeoutMs: 30_000, what: 'the HTTP/2 intake to drain' });
  });

  it('still answers the API server after every attack', async () => {
    // The API server reads configurations through an informer: wait until it calls the webhook.
    const defaulted = await waitFor(
      async () => {
        const created = await env.client.transport.request(
          'POST',
          `/apis/test.nestor.dev/v1/namespaces/${NS}/widgets?dryRun=All`,
          { body: widget(NS, 'after-attacks') },
        );
        const object = JSON.parse(created.body.toString()) as Widget;
        return created.status === 201 && object.spec.mode === 'standard' ? object : undefined;
      },
      { timeoutMs: 30_000, what: 'a create through the API server, defaulted by the webhook' },
    );
    assert.equal(defaulted.spec.mode, 'standard');
  });
});
