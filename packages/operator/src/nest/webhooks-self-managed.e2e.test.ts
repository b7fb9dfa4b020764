// Self-managed webhook certificates against the real API server: the configurations and a
// CRD's conversion are installed with no caBundle, pointing at 127.0.0.1 (as a test does); the
// app makes its Secret, patches the CA in, becomes ready, and the API server then calls it. A
// second replica reuses the Secret's CA and writes nothing; a lost Secret is made again and
// the new CA patched in while the webhook keeps being called.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { randomBytes, X509Certificate } from 'node:crypto';
import { request } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import type { INestApplicationContext } from '@nestjs/common';
import { KubeApiError } from '@nestor/core';
import { freePort, TestEnvironment, waitFor } from '@nestor/testing';
import {
  AdmissionDenied,
  ValidateCreate,
  Default,
  Webhook,
  webhookConfigurationsOf,
  type OperatorModuleOptions,
} from '../index.js';
import { bootOperatorApp } from '../test-support/operator-app.js';
import { WIDGET_CRD, Widget, widget } from '../test-support/widget.js';

const SUFFIX = randomBytes(3).toString('hex');
const NS = `self-managed-${SUFFIX}`;
const CONFIGURATION = `widgets-self-managed-${SUFFIX}`;
const SECRET = 'webhook-server-cert';
const GROUP = `sm${SUFFIX}.test.nestor.dev`;
const GIZMOS = `gizmos.${GROUP}`;

@Webhook(Widget, { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } }, timeoutSeconds: 5 })
class WidgetWebhook {
  @ValidateCreate()
  create(object: Widget): void {
    if (object.spec.size > 5) throw new AdmissionDenied(`size ${object.spec.size} is over 5`);
  }

  @Default()
  defaults(object: Widget): void {
    object.spec.mode ??= 'self-managed';
  }
}

let env: TestEnvironment;
let port: number;
const apps: INestApplicationContext[] = [];

const PATHS = {
  ValidatingWebhookConfiguration: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
  MutatingWebhookConfiguration: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
} as const;
const CRD_PATH = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${GIZMOS}`;
const SECRET_PATH = `/api/v1/namespaces/${NS}/secrets/${SECRET}`;

interface Configuration {
  metadata: { resourceVersion: string };
  webhooks: { clientConfig: { url: string; caBundle?: string } }[];
}
interface Secret {
  metadata: { resourceVersion: string; uid: string };
  type: string;
  data: Record<string, string>;
}

const configuration = (kind: keyof typeof PATHS) =>
  env.client.request<Configuration>('GET', `${PATHS[kind]}/${CONFIGURATION}`);
const crdBundle = async () =>
  (
    await env.client.request<{
      spec: { conversion: { webhook: { clientConfig: { caBundle?: string } } } };
    }>('GET', CRD_PATH)
  ).spec.conversion.webhook.clientConfig.caBundle;
const secret = () => env.client.request<Secret>('GET', SECRET_PATH);
const bundles = async () => [
  ...(await configuration('ValidatingWebhookConfiguration')).webhooks.map((w) => w.clientConfig.caBundle),
  ...(await configuration('MutatingWebhookConfiguration')).webhooks.map((w) => w.clientConfig.caBundle),
  await crdBundle(),
];

/** The options of one replica: it listens on `listenPort`, the configurations point at `port`. */
function selfManaged(listenPort: number, healthPort: number): Omit<OperatorModuleOptions, 'kubeConfig'> {
  return {
    namespace: NS,
    health: { port: healthPort, host: '127.0.0.1' },
    webhooks: {
      host: '127.0.0.1',
      port: listenPort,
      certificates: 'self-managed',
      selfManaged: {
        namespace: NS,
        serviceName: 'widgets-webhook',
        hosts: ['127.0.0.1'],
        configurationName: CONFIGURATION,
        conversionCustomResourceDefinitions: [GIZMOS],
        checkIntervalMs: 1000,
      },
    },
  };
}

async function boot(listenPort: number): Promise<{ app: INestApplicationContext; healthPort: number }> {
  const healthPort = await freePort();
  const app = await bootOperatorApp({
    kubeConfig: env.kubeConfig,
    providers: [WidgetWebhook],
    readFlags: false,
    ...selfManaged(listenPort, healthPort),
  });
  apps.push(app);
  return { app, healthPort };
}

const ready = (healthPort: number) =>
  waitFor(async () => (await fetch(`http://127.0.0.1:${healthPort}/readyz`)).status === 200, {
    timeoutMs: 30_000,
    what: 'the replica to be ready (its caBundles patched)',
  });

/** A dry-run create over the limit: the webhook's denial, once the API server calls it with the CA it trusts. */
async function denial(): Promise<string | undefined> {
  try {
    await env.client.request(
      'POST',
      `/apis/test.nestor.dev/v1/namespaces/${NS}/widgets?dryRun=All`,
      widget(NS, 'big', { size: 9 }),
    );
    return undefined;
  } catch (error) {
    return error instanceof KubeApiError ? error.detail : String(error);
  }
}

/** The fingerprint of the certificate a replica serves, checked against a CA bundle. */
function servedFingerprint(listenPort: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: listenPort, path: '/healthz', method: 'POST', ca, agent: false },
      (res) => {
        resolve((res.socket as TLSSocket).getPeerCertificate().fingerprint256);
        res.resume();
      },
    );
    req.on('error', reject);
    req.end();
  });
}

before(async () => {
  env = await TestEnvironment.start({ crds: [WIDGET_CRD] });
  await env.client.request('POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: NS },
  });
  port = await freePort();
  // As for a local run with self-managed certificates: no caBundle, pointed at 127.0.0.1,
  // named as selfManaged.configurationName says.
  for (const config of webhookConfigurationsOf([WidgetWebhook], {
    name: CONFIGURATION,
    url: `https://127.0.0.1:${port}`,
  })) {
    await env.client.request('POST', PATHS[config.kind], config);
  }
  await env.installCRDs([
    {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: GIZMOS },
      spec: {
        group: GROUP,
        scope: 'Namespaced',
        names: { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo', listKind: 'GizmoList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
        conversion: {
          strategy: 'Webhook',
          webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: `https://127.0.0.1:${port}/convert` } },
        },
      },
    } as never,
  ]);
});

after(async () => {
  for (const app of apps.reverse()) await app.close();
  for (const kind of Object.keys(PATHS) as (keyof typeof PATHS)[]) {
    await env.client.request('DELETE', `${PATHS[kind]}/${CONFIGURATION}`).catch(() => undefined);
  }
  await env.client.request('DELETE', CRD_PATH).catch(() => undefined);
  await env.client.request('DELETE', `/api/v1/namespaces/${NS}`).catch(() => undefined);
  await env.stop();
});

describe('self-managed webhook certificates', () => {
  let caBundle: string;
  let first: { healthPort: number };

  it('makes its Secret, patches the CA into the configurations and the CRD, and then the API server calls it', async () => {
    assert.deepEqual(await bundles(), [undefined, undefined, undefined], 'installed without a caBundle');
    first = await boot(port);
    await ready(first.healthPort);

    const stored = await secret();
    assert.equal(stored.type, 'kubernetes.io/tls');
    assert.deepEqual(Object.keys(stored.data).sort(), ['ca.crt', 'ca.key', 'tls.crt', 'tls.key']);
    caBundle = stored.data['ca.crt']!;
    assert.deepEqual(await bundles(), [caBundle, caBundle, caBundle]);
    const leaf = new X509Certificate(Buffer.from(stored.data['tls.crt']!, 'base64'));
    assert.equal(
      leaf.subjectAltName,
      `DNS:widgets-webhook.${NS}.svc, DNS:widgets-webhook.${NS}.svc.cluster.local, IP Address:127.0.0.1`,
    );

    // The API server loads configurations asynchronously: wait until it calls the webhook.
    const detail = await waitFor(async () => ((await denial()) ?? '').match(/denied the request: .*/)?.[0], {
      timeoutMs: 30_000,
      what: 'the API server to call the self-managed webhook',
    });
    assert.equal(detail, 'denied the request: size 9 is over 5');
    const created = await env.client.request<Widget>(
      'POST',
      `/apis/test.nestor.dev/v1/namespaces/${NS}/widgets?dryRun=All`,
      widget(NS, 'small', { size: 1 }),
    );
    assert.equal(created.spec.mode, 'self-managed', 'the defaulting webhook was called too');
  });

  it('lets a second replica reuse the CA: no second Secret, no caBundle written again', async () => {
    const before = await secret();
    const versions = await Promise.all([
      configuration('ValidatingWebhookConfiguration'),
      configuration('MutatingWebhookConfiguration'),
    ]).then((configs) => configs.map((c) => c.metadata.resourceVersion));
    const secondPort = await freePort();
    const second = await boot(secondPort);
    await ready(second.healthPort);

    const after = await secret();
    assert.equal(after.metadata.uid, before.metadata.uid);
    assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion, 'the Secret was not written');
    const secrets = await env.client.request<{ items: unknown[] }>('GET', `/api/v1/namespaces/${NS}/secrets`);
    assert.equal(secrets.items.length, 1);
    assert.deepEqual(
      await Promise.all([
        configuration('ValidatingWebhookConfiguration'),
        configuration('MutatingWebhookConfiguration'),
      ]).then((configs) => configs.map((c) => c.metadata.resourceVersion)),
      versions,
      'the configurations were not patched again',
    );
    const ca = Buffer.from(caBundle, 'base64').toString();
    assert.equal(
      await servedFingerprint(secondPort, ca),
      await servedFingerprint(port, ca),
      'both serve the Secret’s certificate',
    );
  });

  it('makes a lost Secret again, patches the new CA in, and is called with it', async () => {
    const before = await secret();
    await env.client.request('DELETE', SECRET_PATH);
    const renewed = await waitFor(
      async () => {
        const now = await secret().catch(() => undefined);
        return now && now.metadata.uid !== before.metadata.uid && now;
      },
      { timeoutMs: 30_000, what: 'a replica to make the Secret again' },
    );
    assert.notEqual(renewed.data['ca.crt'], caBundle, 'a new CA');
    await waitFor(async () => (await bundles()).every((b) => b === renewed.data['ca.crt']), {
      timeoutMs: 30_000,
      what: 'the new CA in every caBundle',
    });
    const secrets = await env.client.request<{ items: unknown[] }>('GET', `/api/v1/namespaces/${NS}/secrets`);
    assert.equal(secrets.items.length, 1, 'the two replicas made one Secret');
    await ready(first.healthPort);
    await waitFor(async () => (await denial())?.includes('is over 5'), {
      timeoutMs: 30_000,
      what: 'the API server to call the webhook with the new CA',
    });
  });
});
