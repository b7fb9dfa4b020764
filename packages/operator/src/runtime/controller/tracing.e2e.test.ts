import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { KubeApiError, Transport, type KubeObject } from '@nestor/core';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { ConfigMap } from '../../client/kinds.js';
import { resourceOf } from '../../crd/custom-resource.decorator.js';
import { createConfigMap } from '../../test-support/e2e-helpers.js';
import { isChildOf, recordSpans, type SpanRecorder } from '../../test-support/in-memory-tracing.js';
import { WIDGET_CRD, Widget, widget } from '../../test-support/widget.js';
import { Manager } from '../manager/manager.js';

// A reconcile's span and the spans of the KubeClient requests it makes, against a real API
// server: the answers' status codes are the server's, not the client's guesses.

const Widgets = resourceOf(Widget);

let env: TestEnvironment;
let transport: Transport;
let recorder: SpanRecorder;
before(async () => {
  recorder = recordSpans();
  env = await TestEnvironment.start({ crds: [WIDGET_CRD] });
  transport = await Transport.fromKubeConfig(env.kubeConfig);
});
after(async () => {
  transport?.close();
  await env?.stop();
  await recorder?.stop();
});

describe('tracing a reconcile against a real API server', () => {
  it('makes a span per reconcile, and a child span per KubeClient request with its verb, resource and status', async () => {
    const ns = await env.createNamespace('tracing');
    await env.client.request('POST', `/apis/test.nestor.dev/v1/namespaces/${ns}/widgets`, widget(ns, 'traced'));
    const manager = new Manager({ transport });
    let done = false;
    manager.addController<Widget>({
      name: 'traced-widgets',
      resource: Widgets,
      namespace: ns,
      reconcile: async ({ object, client }) => {
        if (done) return;
        const kube = client!;
        // Not cached (ConfigMaps have no informer here): a GET answered 404, an answer and not an error.
        assert.equal(await kube.get(ConfigMap, { namespace: ns, name: 'absent' }), undefined);
        const child = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'child', namespace: ns } };
        await kube.create(child);
        await kube.apply({ ...child, data: { size: String(object!.spec.size) } });
        await kube.list(ConfigMap, { namespace: ns, labelSelector: 'missing=label' });
        await kube.patch(Widgets, { namespace: ns, name: 'traced' }, { status: { phase: 'Ready' } }, 'merge', 'status');
        await assert.rejects(kube.create(child), (e) => e instanceof KubeApiError && e.status === 409);
        assert.equal(await kube.delete(ConfigMap, { namespace: ns, name: 'child' }), true);
        done = true;
        return { requeueAfter: 60_000 };
      },
    });
    await manager.start();
    let reconcile: ReadableSpan;
    try {
      reconcile = await waitFor(
        () =>
          recorder
            .spans()
            .find((s) => s.name === 'reconcile traced-widgets' && s.attributes['nestor.result'] === 'requeue_after'),
        { timeoutMs: 30_000, what: 'the reconcile span' },
      );
    } finally {
      await manager.stop();
    }
    assert.equal(reconcile.attributes['nestor.controller'], 'traced-widgets');
    assert.equal(reconcile.attributes['nestor.kind'], 'Widget');
    assert.equal(reconcile.attributes['k8s.namespace.name'], ns);
    assert.equal(reconcile.attributes['nestor.object.name'], 'traced');
    assert.equal(reconcile.attributes['nestor.requeue'], true);

    const requests = recorder.spans().filter((s) => isChildOf(s, reconcile));
    const shown = requests.map((s) => [
      s.name,
      s.attributes['nestor.kube.verb'],
      s.attributes['http.request.method'],
      s.attributes['http.response.status_code'],
      s.status.code,
    ]);
    assert.deepEqual(shown, [
      ['get configmaps', 'get', 'GET', 404, SpanStatusCode.UNSET],
      ['create configmaps', 'create', 'POST', 201, SpanStatusCode.UNSET],
      ['patch configmaps', 'patch', 'PATCH', 200, SpanStatusCode.UNSET],
      ['list configmaps', 'list', 'GET', 200, SpanStatusCode.UNSET],
      ['patch widgets.test.nestor.dev', 'patch', 'PATCH', 200, SpanStatusCode.UNSET],
      ['create configmaps', 'create', 'POST', 409, SpanStatusCode.ERROR],
      ['delete configmaps', 'delete', 'DELETE', 200, SpanStatusCode.UNSET],
    ]);
    // Each span's clock is anchored to Date.now() when it starts (the SDK's _performanceOffset),
    // whole milliseconds: two spans' clocks can differ by up to one, so a request that ended
    // just before its reconcile can read up to a millisecond after it (failed once in CI).
    const nanos = (time: [number, number]) => time[0] * 1e9 + time[1];
    for (const span of requests) {
      assert.equal(span.kind, SpanKind.CLIENT);
      assert.equal(span.attributes['k8s.namespace.name'], ns);
      assert.ok(
        nanos(span.endTime) <= nanos(reconcile.endTime) + 2e6,
        `${span.name} ended ${(nanos(span.endTime) - nanos(reconcile.endTime)) / 1e6} ms after its reconcile`,
      );
    }
    const [, created, applied, , status, conflict] = requests;
    assert.equal(status!.attributes['nestor.kube.patch_type'], 'merge');
    assert.equal(created!.attributes['nestor.object.name'], 'child');
    assert.equal(applied!.attributes['nestor.kube.patch_type'], 'apply');
    assert.equal(status!.attributes['nestor.kube.subresource'], 'status');
    assert.equal(status!.attributes['nestor.kube.resource'], 'widgets.test.nestor.dev');
    assert.equal(status!.attributes['nestor.kube.kind'], 'Widget');
    assert.equal(conflict!.attributes['error.type'], '409');
  });

  it('gives requests made outside any reconcile spans of their own, not children of one', async () => {
    const ns = await env.createNamespace('tracing-root');
    await createConfigMap(env.client, ns, 'alone');
    const manager = new Manager({ transport });
    try {
      const read = await manager.client.get<KubeObject>(ConfigMap, { namespace: ns, name: 'alone' });
      assert.equal(read?.metadata?.name, 'alone');
    } finally {
      await manager.stop();
    }
    const span = recorder.spans().find((s) => s.name === 'get configmaps' && s.attributes['k8s.namespace.name'] === ns);
    assert.ok(span, 'a span for the GET');
    assert.equal(span.parentSpanContext, undefined);
    assert.equal(span.attributes['http.response.status_code'], 200);
  });
});
