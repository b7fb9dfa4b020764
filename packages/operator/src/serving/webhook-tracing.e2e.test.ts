import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { selfSignedCertificate, Transport } from '@nestor/core';
import { freePort, TestEnvironment } from '@nestor/testing';
import { HttpKubeClient } from '../client/http-kube-client.js';
import { ConfigMap } from '../client/kinds.js';
import { createConfigMap } from '../test-support/e2e-helpers.js';
import { isChildOf, recordSpans, type SpanRecorder } from '../test-support/in-memory-tracing.js';
import { requestOnce } from '../test-support/request-once.js';
import { AdmissionDenied } from '../webhooks/admission-denied.js';
import { HubSpokeConverter } from '../webhooks/hub-spoke-converter.js';
import { WebhookHttpsServer } from './webhook-https-server.js';

// The webhook server's spans: one per admission or conversion review, a child of the API
// server's span when the request carries W3C trace context, with the handler's KubeClient
// requests (to a real API server) as its children.

const WIDGET = { group: 'example.com', version: 'v1', kind: 'Widget' };
const pair = selfSignedCertificate({ hosts: ['127.0.0.1'] });
const certDir = mkdtempSync(join(tmpdir(), 'nestor-webhook-tracing-'));
writeFileSync(join(certDir, 'tls.crt'), pair.cert);
writeFileSync(join(certDir, 'tls.key'), pair.key);

// What kube-apiserver sends with APIServerTracing on: its span's context, sampled.
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const API_SERVER_SPAN = '00f067aa0ba902b7';
const traceparent = `00-${TRACE_ID}-${API_SERVER_SPAN}-01`;

interface Widget {
  metadata: { name: string; namespace: string };
  spec: { size: number; quota?: string };
}

let env: TestEnvironment;
let transport: Transport;
let recorder: SpanRecorder;
let server: WebhookHttpsServer;
let ns: string;
before(async () => {
  recorder = recordSpans();
  env = await TestEnvironment.start();
  transport = await Transport.fromKubeConfig(env.kubeConfig);
  ns = await env.createNamespace('webhook-tracing');
  await createConfigMap(env.client, ns, 'quota', { data: { max: '3' } });
  const kube = new HttpKubeClient(transport);
  server = new WebhookHttpsServer({ host: '127.0.0.1', port: await freePort(), certDir });
  // The handler reads the quota from the API server: its request is the review's child.
  server.validating<Widget>(WIDGET, {
    create: async (widget) => {
      const quota = await kube.get(ConfigMap, { namespace: ns, name: 'quota' });
      const max = Number(quota?.data?.['max']);
      if (widget.spec.size > max) throw new AdmissionDenied(`size ${widget.spec.size} is over the quota of ${max}`);
    },
  });
  server.mutating<Widget>(WIDGET, () => {
    throw new Error('the defaulter broke');
  });
  const identity = { toHub: (o: object) => o, fromHub: (o: object) => o };
  server.conversions([
    new HubSpokeConverter({ group: 'example.com', kind: 'Widget', hub: 'v2', spokes: { v1: identity } }),
  ]);
  await server.start();
});
after(async () => {
  await server?.stop();
  transport?.close();
  await env?.stop();
  await recorder?.stop();
  rmSync(certDir, { recursive: true, force: true });
});

const admissionReview = (uid: string, size: number) =>
  JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: WIDGET,
      resource: { group: 'example.com', version: 'v1', resource: 'widgets' },
      name: 'w',
      namespace: ns,
      operation: 'CREATE',
      userInfo: { username: 'admin' },
      object: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: ns }, spec: { size } },
      oldObject: null,
      dryRun: false,
    },
  });

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  requestOnce({
    port: server.port!,
    path,
    body,
    ca: pair.cert,
    headers: { 'content-type': 'application/json', ...headers },
  });

const spanOfReview = (uid: string) => {
  const found = recorder.spans().filter((s) => s.attributes['nestor.review.uid'] === uid);
  assert.equal(found.length, 1, `one span for review ${uid}`);
  return found[0]!;
};

describe('webhook spans', () => {
  it("continues the API server's trace into the admission handler and the requests it makes", async () => {
    const answer = await post('/validate-example-com-v1-widget', admissionReview('allow-1', 2), { traceparent });
    assert.equal((JSON.parse(answer.text) as { response: { allowed: boolean } }).response.allowed, true);

    const review = spanOfReview('allow-1');
    assert.equal(review.name, 'admission /validate-example-com-v1-widget');
    assert.equal(review.kind, SpanKind.SERVER);
    assert.ok(
      isChildOf(review, { traceId: TRACE_ID, spanId: API_SERVER_SPAN, traceFlags: 1 }),
      'the API server span is its parent',
    );
    assert.equal(review.attributes['nestor.kind'], 'Widget');
    assert.equal(review.attributes['nestor.admission.operation'], 'CREATE');
    assert.equal(review.attributes['k8s.namespace.name'], ns);
    assert.equal(review.attributes['nestor.object.name'], 'w');
    assert.equal(review.attributes['nestor.admission.allowed'], true);
    assert.equal(review.status.code, SpanStatusCode.UNSET);

    const [read, ...others] = recorder.spans().filter((s) => isChildOf(s, review));
    assert.equal(others.length, 0);
    assert.equal(read?.name, 'get configmaps');
    assert.equal(read.attributes['http.response.status_code'], 200);
  });

  it('records a denial as the answer it is, and a handler that threw as an error', async () => {
    await post('/validate-example-com-v1-widget', admissionReview('deny-1', 9));
    const denied = spanOfReview('deny-1');
    assert.equal(denied.attributes['nestor.admission.allowed'], false);
    assert.equal(denied.attributes['nestor.admission.code'], 403);
    assert.equal(denied.status.code, SpanStatusCode.UNSET);
    assert.equal(denied.parentSpanContext, undefined, 'no trace context sent: a trace of its own');

    await post('/mutate-example-com-v1-widget', admissionReview('broken-1', 1));
    const broken = spanOfReview('broken-1');
    assert.equal(broken.attributes['nestor.admission.allowed'], false);
    assert.equal(broken.attributes['nestor.admission.code'], 500);
    assert.equal(broken.status.code, SpanStatusCode.ERROR);
    assert.match(broken.status.message ?? '', /the defaulter broke/);
  });

  it('makes a span per conversion review with the version asked for and the result', async () => {
    const body = JSON.stringify({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: {
        uid: 'convert-1',
        desiredAPIVersion: 'example.com/v2',
        objects: [{ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: ns }, spec: {} }],
      },
    });
    const answer = await post('/convert', body, { traceparent });
    assert.equal(
      (JSON.parse(answer.text) as { response: { result: { status: string } } }).response.result.status,
      'Success',
    );
    const span = spanOfReview('convert-1');
    assert.equal(span.name, 'conversion /convert');
    assert.equal(span.attributes['nestor.conversion.desired_api_version'], 'example.com/v2');
    assert.equal(span.attributes['nestor.conversion.objects'], 1);
    assert.equal(span.attributes['nestor.kind'], 'Widget');
    assert.equal(span.attributes['nestor.conversion.result'], 'Success');
    assert.equal(span.spanContext().traceId, TRACE_ID);
  });
});
