// Admission webhooks against the real API server: it calls a @Webhook class served by the
// app over HTTPS (configurations and certificates from TestEnvironment.installWebhooks), and
// the client sees denials, warnings, defaults and failures as kubectl would. The webhooks
// match only this file's namespace, so other files sharing the control plane never call them.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { KubeApiError, type TransportResponse } from '@nestor/core';
import { freePort, TestEnvironment, waitFor, type LocalWebhooks } from '@nestor/testing';
import {
  AdmissionDenied,
  Default,
  ValidateCreate,
  ValidateDelete,
  ValidateUpdate,
  Webhook,
  webhookConfigurationsOf,
  type AdmissionContext,
} from '../index.js';
import { bootOperatorApp } from '../test-support/operator-app.js';
import { WIDGET_CRD, Widget, widget } from '../test-support/widget.js';

const SUFFIX = randomBytes(3).toString('hex');
const NS = `webhooks-${SUFFIX}`;
const VALIDATING = 'validate-test-nestor-dev-v1-widget.nestor.dev';

/** An injected service: the quota a rule CEL cannot express would read. */
@Injectable()
class Quota {
  readonly maxSize = 5;
}

interface Seen {
  operation: string;
  name: string;
  dryRun: boolean;
  username?: string;
}

@Webhook(Widget, {
  namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } },
  timeoutSeconds: 5,
})
class WidgetWebhook {
  readonly seen: Seen[] = [];

  constructor(private readonly quota: Quota) {}

  @ValidateCreate()
  create(object: Widget, context: AdmissionContext<Widget>): string[] {
    this.record(object, context);
    this.checkSize(object);
    return object.spec.size > 3 ? [`size ${object.spec.size} is large`] : [];
  }

  @ValidateUpdate()
  update(object: Widget, _old: Widget, context: AdmissionContext<Widget>): void {
    this.record(object, context);
    this.checkSize(object);
  }

  @ValidateDelete()
  remove(object: Widget, context: AdmissionContext<Widget>): void {
    this.record(object, context);
    if (object.metadata.labels?.protected === 'true') {
      throw new AdmissionDenied(`widget ${object.metadata.name} is protected: remove its label first`);
    }
  }

  @Default()
  defaults(object: Widget): void {
    object.spec.mode ??= 'standard';
    object.metadata.labels = { ...object.metadata.labels, 'defaulted-by': 'nestor' };
  }

  private checkSize(object: Widget): void {
    if (object.spec.size > this.quota.maxSize) {
      throw new AdmissionDenied(`size ${object.spec.size} exceeds the quota of ${this.quota.maxSize}`, {
        code: 422,
        reason: 'Invalid',
      });
    }
  }

  private record(object: Widget, context: AdmissionContext<Widget>): void {
    this.seen.push({
      operation: context.operation,
      name: object.metadata.name ?? '',
      dryRun: context.dryRun,
      ...(context.userInfo.username ? { username: context.userInfo.username } : {}),
    });
  }
}

let env: TestEnvironment;
let webhooks: LocalWebhooks;
let app: INestApplicationContext | undefined;
let healthPort: number;

const path = (name = '') => `/apis/test.nestor.dev/v1/namespaces/${NS}/widgets${name ? `/${name}` : ''}`;
const create = (name: string, spec: Widget['spec'], query = '', labels?: Record<string, string>) => {
  const object = widget(NS, name, spec);
  if (labels) object.metadata.labels = labels;
  return env.client.transport.request('POST', `${path()}${query}`, { body: object });
};

/** The status, Status reason and message a call was refused with, as a client sees them (fails the test if admitted). */
async function rejection(call: Promise<unknown>): Promise<{ status: number; reason?: string; detail: string }> {
  let result: unknown;
  try {
    result = await call;
  } catch (error) {
    if (error instanceof KubeApiError)
      return { status: error.status, reason: error.statusObject?.reason, detail: error.detail };
    throw error;
  }
  const response = result as TransportResponse;
  if (typeof response?.status === 'number' && response.status >= 400) {
    const status = JSON.parse(response.body.toString()) as { message: string; reason?: string };
    return { status: response.status, reason: status.reason, detail: status.message };
  }
  assert.fail('the API server admitted the request');
}

/** A request straight to the webhook server, trusting the installed CA. */
function direct(
  urlPath: string,
  body: string | Buffer,
  headers: Record<string, string | number> = { 'content-type': 'application/json' },
): Promise<{ status: number; text: string; fingerprint: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: webhooks.host,
        port: webhooks.port,
        path: urlPath,
        method: 'POST',
        ca: webhooks.caCertificate,
        headers,
        agent: false,
      },
      (res) => {
        const fingerprint = (res.socket as TLSSocket).getPeerCertificate().fingerprint256;
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, fingerprint }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

before(async () => {
  env = await TestEnvironment.start({ crds: [WIDGET_CRD] });
  await env.client.request('POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: NS },
  });
  webhooks = await env.installWebhooks({
    configurations: webhookConfigurationsOf([WidgetWebhook], { name: `widgets-${SUFFIX}` }),
  });
  healthPort = await freePort();
  app = await bootOperatorApp({
    kubeConfig: env.kubeConfig,
    namespace: NS,
    providers: [Quota, WidgetWebhook],
    health: { port: healthPort, host: '127.0.0.1' },
    webhooks: { host: webhooks.host, port: webhooks.port, certDir: webhooks.certDir },
  });
  // The API server reads configurations through an informer: wait until it calls the webhook.
  await waitFor(
    async () => {
      const error = await rejection(create('probe', { size: 99 }, '?dryRun=All')).catch(() => undefined);
      return error?.detail.includes('exceeds the quota');
    },
    { timeoutMs: 30_000, what: 'the API server to call the webhook' },
  );
});

after(async () => {
  await app?.close();
  await webhooks?.uninstall();
  await env.client.request('DELETE', `/api/v1/namespaces/${NS}`).catch(() => undefined);
  await env.stop();
});

describe('admission webhooks served to the API server', () => {
  it('denies a create with the webhook’s message and code, as kubectl shows it', async () => {
    const error = await rejection(create('too-big', { size: 9 }));
    assert.equal(error.status, 422);
    assert.equal(error.detail, `admission webhook "${VALIDATING}" denied the request: size 9 exceeds the quota of 5`);
  });

  it('applies the defaults (the computed patch) before validation, and denies an update', async () => {
    const response = await create('small', { size: 1 });
    assert.equal(response.status, 201);
    const stored = await env.client.request<Widget>('GET', path('small'));
    assert.equal(stored.spec.mode, 'standard');
    assert.equal(stored.metadata.labels?.['defaulted-by'], 'nestor');
    const error = await rejection(
      env.client.request('PUT', path('small'), { ...stored, spec: { ...stored.spec, size: 8 } }),
    );
    assert.equal(error.status, 422);
    assert.match(error.detail, /denied the request: size 8 exceeds the quota of 5$/);
    const update = await env.client.request<Widget>('PUT', path('small'), {
      ...stored,
      spec: { ...stored.spec, size: 2 },
    });
    assert.equal(update.spec.size, 2);
  });

  it('returns the warnings to the client as Warning headers', async () => {
    const response = await create('large', { size: 4 });
    assert.equal(response.status, 201);
    assert.match(String(response.headers.warning), /299 - "size 4 is large"/);
  });

  it('lets the handler see a dry run, and persists nothing', async () => {
    const response = await create('dry', { size: 2 }, '?dryRun=All');
    assert.equal(response.status, 201);
    assert.equal(
      (JSON.parse(response.body.toString()) as Widget).spec.mode,
      'standard',
      'defaulted in the dry run too',
    );
    const seen = app!.get(WidgetWebhook).seen;
    assert.deepEqual(
      seen.filter((s) => s.name === 'dry'),
      [{ operation: 'CREATE', name: 'dry', dryRun: true, username: 'admin' }],
    );
    const error = await rejection(env.client.request('GET', path('dry')));
    assert.equal(error.status, 404);
  });

  it('validates a DELETE against the object being deleted', async () => {
    await create('guarded', { size: 1 }, '', { protected: 'true' });
    const error = await rejection(env.client.request('DELETE', path('guarded')));
    assert.equal(error.status, 403);
    // The reason the API server gives 403, which kubectl prints: `Error from server (Forbidden): ...`.
    assert.equal(error.reason, 'Forbidden');
    assert.equal(
      error.detail,
      `admission webhook "${VALIDATING}" denied the request: widget guarded is protected: remove its label first`,
    );
    await env.client.request(
      'PATCH',
      path('guarded'),
      { metadata: { labels: { protected: null } } },
      'application/merge-patch+json',
    );
    await env.client.request('DELETE', path('guarded'));
    assert.ok(app!.get(WidgetWebhook).seen.some((s) => s.operation === 'DELETE' && s.name === 'guarded'));
  });

  it('answers malformed bodies with 400 and a reason, and keeps serving', async () => {
    const validate = '/validate-test-nestor-dev-v1-widget';
    const notJson = await direct(validate, '{"apiVersion":');
    assert.equal(notJson.status, 400);
    assert.match(notJson.text, /the body is not JSON/);
    const wrongKind = await direct(validate, JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap' }));
    assert.equal(wrongKind.status, 400);
    assert.match(wrongKind.text, /expected an AdmissionReview/);
    const noUid = await direct(
      validate,
      JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: {} }),
    );
    assert.equal(noUid.status, 400);
    assert.match(noUid.text, /request.uid is missing/);
    const text = await direct(validate, 'hello', { 'content-type': 'text/plain' });
    assert.equal(text.status, 400);
    const huge = await direct(validate, Buffer.alloc(8 * 1024 * 1024, 0x20));
    assert.equal(huge.status, 413);
    const unknown = await direct('/validate-nothing', '{}');
    assert.equal(unknown.status, 404);
    // Still serving the API server.
    const error = await rejection(create('after-malformed', { size: 7 }));
    assert.match(error.detail, /exceeds the quota/);
  });

  it('reports the webhook server in /readyz', async () => {
    const response = await fetch(`http://127.0.0.1:${healthPort}/readyz?verbose`);
    assert.equal(response.status, 200);
    assert.match(await response.text(), /\[\+\]webhook-server ok/);
  });

  it('serves a rotated certificate without a failed request', async () => {
    const before = (await direct('/validate-nothing', '{}')).fingerprint;
    let stop = false;
    let requests = 0;
    const failures: string[] = [];
    const load = (async () => {
      while (!stop) {
        const response = await create(`rotation-${requests++}`, { size: 2 }, '?dryRun=All').catch((e: Error) => e);
        if (response instanceof Error || response.status !== 201)
          failures.push(String(response instanceof Error ? response.message : response.status));
      }
    })();
    await webhooks.rotateServingCertificate();
    await waitFor(async () => (await direct('/validate-nothing', '{}')).fingerprint !== before, {
      timeoutMs: 30_000,
      what: 'the webhook server to present the rotated certificate',
    });
    const atRotation = requests;
    await waitFor(() => requests >= atRotation + 5, { timeoutMs: 30_000, what: 'requests after the rotation' });
    stop = true;
    await load;
    assert.deepEqual(failures, []);
  });

  it('with the operator down: failure policy Fail rejects, Ignore admits', async () => {
    await app!.close();
    app = undefined;
    const error = await rejection(create('while-down', { size: 1 }));
    assert.match(error.detail, /failed calling webhook/);
    const patch = [{ op: 'replace', path: '/webhooks/0/failurePolicy', value: 'Ignore' }];
    for (const kind of ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations']) {
      await env.client.request(
        'PATCH',
        `/apis/admissionregistration.k8s.io/v1/${kind}/widgets-${SUFFIX}`,
        patch,
        'application/json-patch+json',
      );
    }
    const admitted = await waitFor(
      async () => {
        const response = await create('while-down', { size: 9 }).catch(() => undefined);
        return response?.status === 201 ? response : undefined;
      },
      { timeoutMs: 30_000, what: 'the API server to admit with failurePolicy Ignore' },
    );
    const stored = JSON.parse(admitted.body.toString()) as Widget;
    assert.equal(stored.spec.mode, undefined, 'no defaults: the webhook was not called');
  });
});
