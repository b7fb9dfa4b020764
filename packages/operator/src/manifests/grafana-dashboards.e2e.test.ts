import 'reflect-metadata';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { INestApplicationContext } from '@nestjs/common';
import { selfSignedCertificate } from '@nestor/core';
import { freePort, TestEnvironment, waitFor } from '@nestor/testing';
import {
  Controller,
  Default,
  OperatorHttpServer,
  OperatorMetrics,
  Reconcile,
  ValidateCreate,
  Webhook,
} from '../index.js';
import { grafanaDashboards } from '../manifests-entry.js';
import { bootOperatorApp } from '../test-support/operator-app.js';
import { requestOnce } from '../test-support/request-once.js';
import { WIDGET_CRD, Widget, widget } from '../test-support/widget.js';
import { metricNamesOf } from '../test-support/promql-names.js';

// Every metric a dashboard of `nestor manifests --grafana` queries is one a running operator
// exports: scraped from an operator with every part on (controllers, leader election,
// sharding, webhooks) against a real API server, so each metric family is registered.

@Controller(Widget)
class WidgetController {
  @Reconcile()
  reconcile(): void {}
}

@Webhook(Widget)
class WidgetWebhook {
  @ValidateCreate()
  create(): void {}

  @Default()
  default(): void {}
}

const pair = selfSignedCertificate({ hosts: ['127.0.0.1'] });
const certDir = mkdtempSync(join(tmpdir(), 'nestor-grafana-'));
writeFileSync(join(certDir, 'tls.crt'), pair.cert);
writeFileSync(join(certDir, 'tls.key'), pair.key);

let env: TestEnvironment;
let app: INestApplicationContext;
let exported: Set<string>;
let onFirstUse: Set<string>;
before(async () => {
  env = await TestEnvironment.start({ crds: [WIDGET_CRD] });
  const namespace = await env.createNamespace('grafana');
  const webhookPort = await freePort();
  app = await bootOperatorApp({
    kubeConfig: env.kubeConfig,
    namespace,
    providers: [WidgetController, WidgetWebhook],
    metrics: { port: await freePort(), host: '127.0.0.1', secure: false },
    leaderElection: { id: 'grafana-dashboards', namespace },
    sharding: true,
    webhooks: { host: '127.0.0.1', port: webhookPort, certDir },
  });
  await env.client.request('POST', `/apis/test.nestor.dev/v1/namespaces/${namespace}/widgets`, widget(namespace, 'w'));
  // One review, so the webhook's series have values too.
  await requestOnce({
    port: webhookPort,
    path: '/validate-test-nestor-dev-v1-widget',
    ca: pair.cert,
    body: JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'u-1',
        kind: { group: 'test.nestor.dev', version: 'v1', kind: 'Widget' },
        resource: { group: 'test.nestor.dev', version: 'v1', resource: 'widgets' },
        operation: 'CREATE',
        userInfo: { username: 'admin' },
        object: widget(namespace, 'x'),
      },
    }),
  });
  const { metrics } = app.get(OperatorHttpServer).addresses;
  const text = await waitFor(
    async () => {
      const body = await (await fetch(`http://127.0.0.1:${metrics}/metrics`)).text();
      // Led, and the Widget reconciled: the scrape shows a running operator, not one starting.
      return /^leader_election_master_status\{[^}]*\} 1$/m.test(body) &&
        /^controller_runtime_reconcile_total\{[^}]*result="success"[^}]*\} [1-9]/m.test(body)
        ? body
        : undefined;
    },
    { timeoutMs: 60_000, what: 'the operator to lead and reconcile' },
  );
  exported = exportedNames(text);
  // The storage-version migration's series are registered when a migration first runs (an
  // operator that never migrates exports none): the names its sink registers.
  const fresh = new OperatorMetrics({ defaultMetrics: false });
  fresh.migrationSink();
  onFirstUse = exportedNames(await fresh.registry.metrics());
});
after(async () => {
  await app?.close();
  await env?.stop();
  rmSync(certDir, { recursive: true, force: true });
});

/** Every family of the scrape (`# TYPE` lines) and the series a histogram or summary exports under it. */
function exportedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name! + suffix);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(name! + suffix);
  }
  return names;
}

describe('the Grafana dashboards of nestor manifests --grafana', () => {
  const dashboards = grafanaDashboards('widget-operator');

  it('query only metrics a running operator exports', () => {
    const missing: string[] = [];
    let queried = 0;
    for (const [file, dashboard] of Object.entries(dashboards)) {
      const expressions = [
        ...dashboard.panels.flatMap((panel) => ('targets' in panel ? panel.targets.map((t) => t.expr) : [])),
        ...dashboard.templating.list.flatMap((v) => (v.definition ? [v.definition] : [])),
      ];
      for (const expr of expressions) {
        for (const name of metricNamesOf(expr)) {
          queried++;
          if (!exported.has(name) && !onFirstUse.has(name)) missing.push(`${file}: ${name} in ${expr}`);
        }
      }
    }
    assert.ok(queried > 40, `${queried} metric references checked`);
    assert.deepEqual(missing, []);
  });

  it('show what the issue asks to see: outages, leadership, shards, watches, webhooks, workers, queues', () => {
    const all = new Set(
      Object.values(dashboards).flatMap((d) =>
        d.panels.flatMap((p) => ('targets' in p ? p.targets.flatMap((t) => metricNamesOf(t.expr)) : [])),
      ),
    );
    for (const name of [
      'controller_runtime_reconcile_total',
      'controller_runtime_reconcile_errors_total',
      'controller_runtime_reconcile_time_seconds_bucket',
      'controller_runtime_active_workers',
      'workqueue_depth',
      'workqueue_queue_duration_seconds_bucket',
      'nestor_watch_restarts',
      'nestor_controller_stream_faults_total',
      'nestor_apiserver_unreachable',
      'nestor_apiserver_outages_total',
      'nestor_apiserver_throttled',
      'leader_election_master_status',
      'nestor_shard_objects',
      'controller_runtime_webhook_latency_seconds_bucket',
      'nestor_webhook_denials_total',
    ]) {
      assert.ok(all.has(name), `a panel shows ${name}`);
    }
  });
});
