import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { selfSignedCertificate } from '@nestor/core';
import { freePort } from '@nestor/testing';
import { AdmissionDenied } from '../webhooks/admission-denied.js';
import { requestOnce, type OnceAnswer } from '../test-support/request-once.js';
import { WebhookHttpsServer } from './webhook-https-server.js';

const WIDGET = { group: 'example.com', version: 'v1', kind: 'Widget' };
const pair = selfSignedCertificate({ hosts: ['127.0.0.1'] });
const certDir = mkdtempSync(join(tmpdir(), 'nestor-webhook-server-'));
writeFileSync(join(certDir, 'tls.crt'), pair.cert);
writeFileSync(join(certDir, 'tls.key'), pair.key);

interface Widget {
  metadata: { name: string };
  spec: { size: number; mode?: string };
}

// Port 0 turns the server off, as webhooks.port: 0 does.
const server = new WebhookHttpsServer({ host: '127.0.0.1', port: await freePort(), certDir });
const validatePath = server.validating<Widget>(WIDGET, {
  create: (widget) => {
    if (widget.spec.size > 3) throw new AdmissionDenied(`size ${widget.spec.size} is too large`);
  },
});
const mutatePath = server.mutating<Widget>(WIDGET, (widget) => {
  widget.spec.mode ??= 'standard';
});

before(() => server.start());
after(async () => {
  await server.stop();
  rmSync(certDir, { recursive: true, force: true });
});

function review(size: number): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'u-1',
      kind: WIDGET,
      resource: { group: 'example.com', version: 'v1', resource: 'widgets' },
      name: 'w',
      namespace: 'ns',
      operation: 'CREATE',
      userInfo: { username: 'admin' },
      object: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size } },
      oldObject: null,
      dryRun: false,
    },
  });
}

function post(path: string, body: string): Promise<OnceAnswer> {
  return requestOnce({ port: server.port!, path, body, ca: pair.cert });
}

describe('WebhookHttpsServer', () => {
  it('serves each kind at controller-runtime’s paths', () => {
    assert.equal(validatePath, '/validate-example-com-v1-widget');
    assert.equal(mutatePath, '/mutate-example-com-v1-widget');
    assert.deepEqual(server.paths, [validatePath, mutatePath]);
  });

  it('answers a validation with the handler’s verdict', async () => {
    const allowed = await post(validatePath, review(2));
    assert.equal(allowed.status, 200);
    assert.equal((JSON.parse(allowed.text) as { response: { allowed: boolean } }).response.allowed, true);
    const denied = JSON.parse((await post(validatePath, review(9))).text) as {
      response: { uid: string; allowed: boolean; status: { message: string } };
    };
    assert.equal(denied.response.uid, 'u-1');
    assert.equal(denied.response.allowed, false);
    assert.equal(denied.response.status.message, 'size 9 is too large');
  });

  it('answers a defaulting with the JSON patch of what the handler changed', async () => {
    const answer = JSON.parse((await post(mutatePath, review(1))).text) as {
      response: { allowed: boolean; patchType: string; patch: string };
    };
    assert.equal(answer.response.allowed, true);
    assert.equal(answer.response.patchType, 'JSONPatch');
    assert.deepEqual(JSON.parse(Buffer.from(answer.response.patch, 'base64').toString()), [
      { op: 'add', path: '/spec/mode', value: 'standard' },
    ]);
  });

  it('answers 404 naming the paths it serves, and 400 to a body that is not a review', async () => {
    const missing = await post('/validate-nothing', review(1));
    assert.equal(missing.status, 404);
    assert.match(missing.text, /served: \/validate-example-com-v1-widget, \/mutate-example-com-v1-widget/);
    assert.equal((await post(validatePath, '{"kind":"ConfigMap"}')).status, 400);
  });

  it('is ready once listening, and takes no route after it started', () => {
    assert.deepEqual(server.healthCheck(), { name: 'webhook-server', ok: true });
    assert.throws(() => server.route('/late', { answer: async () => ({}), refuse: () => undefined }), /after start/);
  });

  it('refuses two handlers at one path, and is not ready before it listens', () => {
    const other = new WebhookHttpsServer({ port: 9443 });
    other.validating(WIDGET, {});
    assert.throws(() => other.validating(WIDGET, {}), /two webhooks at \/validate-example-com-v1-widget/);
    assert.deepEqual(other.healthCheck(), {
      name: 'webhook-server',
      ok: false,
      detail: 'the webhook server is not listening',
    });
  });
});
