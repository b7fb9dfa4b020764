import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { selfSignedCertificate } from '@nestor/core';
import { freePort } from '@nestor/testing';
import { OperatorMetrics } from '../metrics/operator-metrics.js';
import { parseMetrics, valueOf } from '../test-support/prometheus.js';
import { requestOnce } from '../test-support/request-once.js';
import { AdmissionDenied } from '../webhooks/admission-denied.js';
import { WebhookHttpsServer } from './webhook-https-server.js';

const WIDGET = { group: 'example.com', version: 'v1', kind: 'Widget' };
const pair = selfSignedCertificate({ hosts: ['127.0.0.1'] });
const certDir = mkdtempSync(join(tmpdir(), 'nestor-webhook-metrics-'));
writeFileSync(join(certDir, 'tls.crt'), pair.cert);
writeFileSync(join(certDir, 'tls.key'), pair.key);

const metrics = new OperatorMetrics({ defaultMetrics: false });
const server = new WebhookHttpsServer({
  host: '127.0.0.1',
  port: await freePort(),
  certDir,
  metrics: metrics.webhookSink(),
});
const path = server.validating<{ spec: { size: number } }>(WIDGET, {
  create: (widget) => {
    if (widget.spec.size > 3) throw new AdmissionDenied('too large', { code: 422 });
  },
});
before(() => server.start());
after(async () => {
  await server.stop();
  rmSync(certDir, { recursive: true, force: true });
});

const review = (size: number) =>
  JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'u',
      kind: WIDGET,
      resource: { group: 'example.com', version: 'v1', resource: 'widgets' },
      operation: 'CREATE',
      userInfo: { username: 'admin' },
      object: { spec: { size } },
    },
  });

const post = (body: string) => requestOnce({ port: server.port!, path, body, ca: pair.cert });

describe("the webhook server's metrics", () => {
  it('counts requests by status, observes their latency, and counts denials by code', async () => {
    const before = parseMetrics(await metrics.scrape());
    assert.equal(valueOf(before, 'controller_runtime_webhook_requests_total', { webhook: path, code: '200' }), 0);

    await post(review(1));
    await post(review(9));
    await post('{"not": "a review"}');

    const samples = parseMetrics(await metrics.scrape());
    const labels = { webhook: path };
    assert.equal(valueOf(samples, 'controller_runtime_webhook_requests_total', { ...labels, code: '200' }), 2);
    assert.equal(valueOf(samples, 'controller_runtime_webhook_requests_total', { ...labels, code: '400' }), 1);
    assert.equal(valueOf(samples, 'controller_runtime_webhook_latency_seconds_count', labels), 3);
    assert.equal(valueOf(samples, 'controller_runtime_webhook_requests_in_flight', labels), 0);
    assert.equal(valueOf(samples, 'nestor_webhook_denials_total', { ...labels, code: '422' }), 1);
  });
});
