// The cache controls a user sets from the module and the decorators, against the real API
// server: a field selector on @Controller (the API server filters, the cache holds only the
// matches), the module's transform (what is stored and handed to the reconciler), the
// resync period (every cached object delivered again without a change), and one kind's own
// settings (cache.byKind) in place of the module's.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { INestApplicationContext } from '@nestjs/common';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { ConfigMap, Controller, InformerCache, Reconcile, Secret, type KubeObject } from '../index.js';
import { createConfigMap } from '../test-support/e2e-helpers.js';
import { bootOperatorApp } from '../test-support/operator-app.js';

const BULKY = 'example.com/bulky';

interface Seen {
  name: string;
  annotations: Record<string, string>;
}

const seen: Seen[] = [];

@Controller(ConfigMap, { fieldSelector: 'metadata.name=wanted' })
class WantedConfigMap {
  @Reconcile()
  reconcile(object: { metadata: { name: string; annotations?: Record<string, string> } }): void {
    seen.push({ name: object.metadata.name, annotations: { ...object.metadata.annotations } });
  }
}

const secrets: Array<Seen & { data: unknown }> = [];

@Controller(Secret, { fieldSelector: 'metadata.name=credentials' })
class CredentialsSecret {
  @Reconcile()
  reconcile(object: { metadata: { name: string; annotations?: Record<string, string> }; data?: unknown }): void {
    secrets.push({ name: object.metadata.name, annotations: { ...object.metadata.annotations }, data: object.data });
  }
}

let env: TestEnvironment;
let app: INestApplicationContext;
let namespace: string;

before(async () => {
  env = await TestEnvironment.start();
  namespace = await env.createNamespace('cache-controls');
  for (const name of ['wanted', 'other']) {
    await env.client.request('POST', `/api/v1/namespaces/${namespace}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, annotations: { [BULKY]: 'x'.repeat(4096), 'example.com/kept': 'yes' } },
      data: { key: 'value' },
    });
  }
  await env.client.request('POST', `/api/v1/namespaces/${namespace}/secrets`, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'credentials', annotations: { [BULKY]: 'kept' } },
    data: { password: Buffer.from('hunter2').toString('base64') },
  });
  app = await bootOperatorApp({
    kubeConfig: env.kubeConfig,
    namespace,
    providers: [WantedConfigMap, CredentialsSecret],
    cache: {
      transform: (object: KubeObject) => {
        delete object.metadata?.annotations?.[BULKY];
        return object;
      },
      resyncPeriodMs: 1_000,
      byKind: [
        {
          kind: Secret,
          transform: (object: KubeObject & { data?: unknown }) => {
            delete object.data;
            return object;
          },
          resyncPeriodMs: 0,
        },
      ],
    },
  });
});

after(async () => {
  await app?.close();
  await env.stop();
});

describe('cache controls', () => {
  it('a field selector: only the matching object is cached and reconciled', async () => {
    await waitFor(() => seen.some((s) => s.name === 'wanted'), {
      timeoutMs: 20_000,
      what: 'the wanted ConfigMap reconciled',
    });
    await createConfigMap(env.client, namespace, 'late-other');
    const cached = app.get(InformerCache).acquire(ConfigMap, { namespace, fieldSelector: 'metadata.name=wanted' });
    try {
      assert.deepEqual(
        cached.informer.list().map((o) => o.metadata?.name),
        ['wanted'],
      );
    } finally {
      cached.release();
    }
    // Resyncs deliver everything cached again: still never the others.
    await waitFor(() => seen.filter((s) => s.name === 'wanted').length >= 3, { timeoutMs: 20_000, what: 'resyncs' });
    assert.deepEqual([...new Set(seen.map((s) => s.name))], ['wanted']);
  });

  it('the transform: what the reconciler gets is what the transform left', () => {
    const first = seen.find((s) => s.name === 'wanted');
    assert.ok(first);
    assert.equal(first.annotations['example.com/kept'], 'yes');
    assert.equal(first.annotations[BULKY], undefined);
  });

  it('the resync period: an unchanged object is reconciled again', () => {
    // Three reconciles of one object that nothing changed (the first test waited for them).
    assert.ok(seen.filter((s) => s.name === 'wanted').length >= 3);
  });

  it('one kind’s settings (cache.byKind) replace the module’s for that kind only', async () => {
    await waitFor(() => secrets.length > 0, { timeoutMs: 20_000, what: 'the Secret reconciled' });
    // Its own transform dropped the data, and the module's (which drops the annotation) did not run.
    assert.equal(secrets[0]!.data, undefined);
    assert.equal(secrets[0]!.annotations[BULKY], 'kept');
    // Its resync is off: the ConfigMaps were delivered again (above), the Secret only once.
    const wanted = seen.filter((s) => s.name === 'wanted').length;
    await waitFor(() => seen.filter((s) => s.name === 'wanted').length >= wanted + 2, {
      timeoutMs: 20_000,
      what: 'two more ConfigMap resyncs',
    });
    assert.equal(secrets.length, 1, 'the Secret, without a resync period of its own, is not delivered again');
  });
});
