// Nest's enhancers on admission handlers, against the real API server: a guard on the
// @Webhook class refuses with its message, an interceptor adds a warning, an HttpException
// denies with its status; an app-wide guard stays out unless `inheritAppConfig`. The second
// app also serves HTTP/2 beside HTTP/1.1. The webhooks match only this file's namespace.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { connect } from 'node:http2';
import { after, before, describe, it } from 'node:test';
import {
  BadRequestException,
  ForbiddenException,
  Injectable,
  UseGuards,
  UseInterceptors,
  type CallHandler,
  type CanActivate,
  type ExecutionContext,
  type INestApplicationContext,
  type NestInterceptor,
} from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { KubeApiError } from '@nestor/core';
import { freePort, TestEnvironment, waitFor, type LocalWebhooks } from '@nestor/testing';
import { map, type Observable } from 'rxjs';
import {
  ValidateCreate,
  ValidateUpdate,
  Webhook,
  webhookConfigurationsOf,
  webhookContextOf,
  type AdmissionContext,
} from '../index.js';
import { bootOperatorApp } from '../test-support/operator-app.js';
import { requestOnce } from '../test-support/request-once.js';
import { WIDGET_CRD, Widget, widget } from '../test-support/widget.js';

const SUFFIX = randomBytes(3).toString('hex');
const NS = `enhancers-${SUFFIX}`;
const VALIDATE = '/validate-test-nestor-dev-v1-widget';

/** A change freeze an operator team toggles (here: the test). */
@Injectable()
class ChangeFreeze {
  until?: string;
}

@Injectable()
class ChangeFreezeGuard implements CanActivate {
  constructor(private readonly freeze: ChangeFreeze) {}

  canActivate(context: ExecutionContext): boolean {
    if (!this.freeze.until) return true;
    const { userInfo } = webhookContextOf(context);
    throw new ForbiddenException(`a change freeze is in effect until ${this.freeze.until} (${userInfo.username})`);
  }
}

/** An interceptor on one handler: what it maps is what the API server gets back. */
@Injectable()
class ReviewedBy implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler<string[] | void>): Observable<string[]> {
    return next.handle().pipe(map((warnings) => [...(warnings ?? []), 'reviewed by the platform team']));
  }
}

/** An app-wide guard written for HTTP callers, as many Nest apps have: it would refuse the API server. */
@Injectable()
class BearerTokenGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers?: Record<string, string> }>();
    return request.headers?.authorization === 'Bearer secret';
  }
}

@Webhook(Widget, { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } }, timeoutSeconds: 5 })
@UseGuards(ChangeFreezeGuard)
class GuardedWidgetWebhook {
  @ValidateCreate()
  @UseInterceptors(ReviewedBy)
  create(object: Widget, context: AdmissionContext<Widget>): string[] {
    if (object.spec.size % 2 === 1) throw new BadRequestException(`size ${object.spec.size} must be even`);
    return context.dryRun ? ['dry run'] : [];
  }

  @ValidateUpdate()
  update(): void {}
}

let env: TestEnvironment;
let webhooks: LocalWebhooks;
let app: INestApplicationContext | undefined;
let inheriting: INestApplicationContext | undefined;
let inheritingPort: number;

const create = (name: string, size: number, query = '') =>
  env.client.transport.request('POST', `/apis/test.nestor.dev/v1/namespaces/${NS}/widgets${query}`, {
    body: widget(NS, name, { size }),
  });

async function rejection(call: Promise<{ status: number; body: Buffer }>): Promise<{ status: number; detail: string }> {
  const response = await call.catch((error: unknown) => {
    if (error instanceof KubeApiError) return { status: error.status, detail: error.detail };
    throw error;
  });
  if ('detail' in response) return response;
  assert.ok(response.status >= 400, `the API server admitted the request (${response.status})`);
  return { status: response.status, detail: (JSON.parse(response.body.toString()) as { message: string }).message };
}

/** An AdmissionReview of a CREATE, as the API server sends it. */
function review(size: number): string {
  const object = widget(NS, 'direct', { size });
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: randomUUID(),
      kind: { group: 'test.nestor.dev', version: 'v1', kind: 'Widget' },
      resource: { group: 'test.nestor.dev', version: 'v1', resource: 'widgets' },
      operation: 'CREATE',
      namespace: NS,
      name: 'direct',
      userInfo: { username: 'admin' },
      object,
    },
  });
}

interface Answer {
  protocol: string;
  status: number;
  response?: { allowed: boolean; status?: { code: number; message: string }; warnings?: string[] };
}

function overHttp1(port: number, body: string): Promise<Answer> {
  return requestOnce({ host: webhooks.host, port, path: VALIDATE, body, ca: webhooks.caCertificate }).then(
    ({ status, text, httpVersion }) => ({ protocol: `HTTP/${httpVersion}`, status, ...parsed(text) }),
  );
}

function overHttp2(port: number, body: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const session = connect(`https://${webhooks.host}:${port}`, { ca: webhooks.caCertificate });
    session.on('error', reject);
    const stream = session.request({ ':method': 'POST', ':path': VALIDATE, 'content-type': 'application/json' });
    let status = 0;
    let text = '';
    stream.on('response', (headers) => (status = Number(headers[':status'])));
    stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
    stream.on('end', () => {
      session.close();
      resolve({ protocol: 'HTTP/2', status, ...parsed(text) });
    });
    stream.on('error', reject);
    stream.end(body);
  });
}

function parsed(text: string): Pick<Answer, 'response'> {
  try {
    return { response: (JSON.parse(text) as { response: Answer['response'] }).response };
  } catch {
    return {};
  }
}

before(async () => {
  env = await TestEnvironment.start({ crds: [WIDGET_CRD] });
  await env.client.request('POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: NS },
  });
  webhooks = await env.installWebhooks({
    configurations: webhookConfigurationsOf([GuardedWidgetWebhook], { name: `enhancers-${SUFFIX}` }),
  });
  const providers = [ChangeFreeze, ChangeFreezeGuard, ReviewedBy, GuardedWidgetWebhook];
  app = await bootOperatorApp({
    kubeConfig: env.kubeConfig,
    namespace: NS,
    providers: [...providers, { provide: APP_GUARD, useClass: BearerTokenGuard }],
    webhooks: { host: webhooks.host, port: webhooks.port, certDir: webhooks.certDir },
  });
  // The same classes, app-wide guard inherited, HTTP/2 offered: reviews posted straight to it.
  inheritingPort = await freePort();
  inheriting = await bootOperatorApp({
    kubeConfig: env.kubeConfig,
    namespace: NS,
    providers: [...providers, { provide: APP_GUARD, useClass: BearerTokenGuard }],
    webhooks: {
      host: webhooks.host,
      port: inheritingPort,
      certDir: webhooks.certDir,
      inheritAppConfig: true,
      http2: true,
    },
  });
  await waitFor(
    async () => (await rejection(create('probe', 3, '?dryRun=All')).catch(() => undefined))?.status === 400,
    { timeoutMs: 30_000, what: 'the API server to call the webhook' },
  );
});

after(async () => {
  await app?.close();
  await inheriting?.close();
  await webhooks?.uninstall();
  await env.client.request('DELETE', `/api/v1/namespaces/${NS}`).catch(() => undefined);
  await env.stop();
});

describe('Nest enhancers on admission handlers', () => {
  it('denies with an HttpException’s status and message', async () => {
    const error = await rejection(create('odd', 3));
    assert.equal(error.status, 400);
    assert.match(error.detail, /denied the request: size 3 must be even$/);
  });

  it('returns what an interceptor maps, and leaves out the app-wide guard by default', async () => {
    const response = await create('even', 2, '?dryRun=All');
    assert.equal(response.status, 201, 'BearerTokenGuard (APP_GUARD) did not run on the review');
    const warnings = String(response.headers.warning);
    assert.match(warnings, /"dry run"/);
    assert.match(warnings, /"reviewed by the platform team"/);
  });

  it('runs the class’s guard, with its injected state and the review’s user', async () => {
    app!.get(ChangeFreeze).until = 'Monday';
    try {
      const error = await rejection(create('frozen', 2));
      assert.equal(error.status, 403);
      assert.match(error.detail, /denied the request: a change freeze is in effect until Monday \(admin\)$/);
    } finally {
      app!.get(ChangeFreeze).until = undefined;
    }
    const response = await create('thawed', 2, '?dryRun=All');
    assert.equal(response.status, 201);
  });

  it('with inheritAppConfig, runs the app-wide guard too', async () => {
    const answer = await overHttp1(inheritingPort, review(2));
    assert.equal(answer.status, 200);
    assert.equal(answer.response?.allowed, false);
    assert.deepEqual(answer.response?.status, { code: 403, message: 'Forbidden resource', reason: 'Forbidden' });
  });

  it('serves HTTP/2 and HTTP/1.1 on one port when http2 is on, malformed bodies still 400', async () => {
    const h2 = await overHttp2(inheritingPort, review(2));
    assert.equal(h2.status, 200);
    assert.equal(h2.response?.status?.code, 403);
    const h1 = await overHttp1(inheritingPort, review(2));
    assert.equal(h1.protocol, 'HTTP/1.1');
    assert.equal(h1.status, 200);
    const malformed = await overHttp2(inheritingPort, '{"apiVersion":');
    assert.equal(malformed.status, 400);
    // The default server speaks HTTP/1.1 only: an HTTP/2 client is refused by ALPN.
    await assert.rejects(overHttp2(webhooks.port, review(2)));
  });
});
