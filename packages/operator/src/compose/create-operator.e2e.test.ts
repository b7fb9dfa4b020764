// createOperator against the real API server: one call builds what OperatorModule builds
// (cluster, manager, probes), a controller added to its manager reconciles and writes through
// the run's client, /readyz reports the cluster's checks, and stop() closes it all. And a
// Cluster connected to a kubeconfig's context, by name.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort, TestEnvironment, waitFor } from '@nestor/testing';
import { parse } from 'yaml';
import { Cluster, ConfigMap, createOperator, silentLogger, WorkerPool, type Operator } from '../runtime-entry.js';
import { requestOnce } from '../test-support/request-once.js';

const SUFFIX = randomBytes(3).toString('hex');
const NS = `compose-${SUFFIX}`;

let env: TestEnvironment;

before(async () => {
  env = await TestEnvironment.start();
  await env.client.request('POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: NS },
  });
});

after(async () => {
  await env.client.request('DELETE', `/api/v1/namespaces/${NS}`).catch(() => undefined);
  await env.stop();
});

describe('createOperator', () => {
  let operator: Operator | undefined;
  after(() => operator?.stop());

  it('builds an operator whose controllers reconcile and write through the run’s client, with its probes', async () => {
    const health = await freePort();
    operator = await createOperator({
      kubeConfig: env.kubeconfigPath,
      readFlags: false,
      fieldManager: `compose-${SUFFIX}`,
      metrics: { port: 0 },
      health: { port: health, host: '127.0.0.1' },
      logger: () => silentLogger,
    });
    assert.equal(operator.client, operator.manager.client, 'one client: the manager’s, not a second one');
    assert.equal(operator.cluster, operator.manager.cluster);
    operator.manager.addController({
      name: `compose-${SUFFIX}`,
      resource: ConfigMap,
      namespace: NS,
      reconcile: async ({ object, client }) => {
        if (!object || object.metadata?.annotations?.['compose.nestor.dev/seen']) return;
        const ref = { namespace: NS, name: object.metadata!.name! };
        await client!.patch(ConfigMap, ref, { metadata: { annotations: { 'compose.nestor.dev/seen': 'yes' } } });
      },
    });
    await operator.start();
    await env.client.request('POST', `/api/v1/namespaces/${NS}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'one' },
      data: { a: 'b' },
    });
    await waitFor(
      async () => {
        const object = (await env.client.request('GET', `/api/v1/namespaces/${NS}/configmaps/one`)) as {
          metadata: { annotations?: Record<string, string> };
        };
        return object.metadata.annotations?.['compose.nestor.dev/seen'] === 'yes';
      },
      { timeoutMs: 30_000, what: 'the controller to annotate the ConfigMap' },
    );
    const ready = await requestOnce({ port: health, path: '/readyz?verbose' });
    assert.equal(ready.status, 200, ready.text);
    assert.match(ready.text, /apiserver ok/);
    assert.match(ready.text, /informer:configmaps ok/);
    await operator.stop();
    assert.equal(operator.manager.isRunning, false);
    await assert.rejects(requestOnce({ port: health, path: '/healthz' }), 'the probe port is closed');
    operator = undefined;
  });
});

describe('Cluster.connect', () => {
  it('connects to a kubeconfig’s context by name, and names the contexts there are when it is unknown', async () => {
    // The test kubeconfig with a second context, current, whose server does not answer.
    const text = readFileSync(env.kubeconfigPath, 'utf8');
    const config = parse(text) as {
      clusters: Array<{ name: string; cluster: Record<string, unknown> }>;
      contexts: Array<{ name: string; context: { cluster: string; user: string } }>;
      'current-context': string;
    };
    const real = config['current-context'];
    const context = config.contexts.find((c) => c.name === real)!;
    config.clusters.push({ name: 'nowhere', cluster: { server: 'https://127.0.0.1:1' } });
    config.contexts.push({ name: 'nowhere', context: { cluster: 'nowhere', user: context.context.user } });
    config['current-context'] = 'nowhere';
    const path = join(mkdtempSync(join(tmpdir(), 'nestor-cluster-')), 'kubeconfig');
    writeFileSync(path, JSON.stringify(config));
    const pool = new WorkerPool();
    await env.client.request('POST', `/api/v1/namespaces/${NS}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'two' },
    });
    const cluster = await Cluster.connect({ kubeConfig: path, context: real, hold: pool });
    try {
      assert.equal(cluster.name, real);
      const two = await cluster.client.get(ConfigMap, { namespace: NS, name: 'two' });
      assert.equal(two?.metadata?.name, 'two', 'read from the context’s API server, not the current one');
      const { informer } = cluster.informers.acquire(ConfigMap, { namespace: NS });
      cluster.start();
      await cluster.waitForSync([informer], { timeoutMs: 30_000, signal: new AbortController().signal });
      assert.ok(
        cluster.health().every((check) => check.ok),
        JSON.stringify(cluster.health()),
      );
    } finally {
      cluster.stop();
    }
    await assert.rejects(
      Cluster.connect({ kubeConfig: path, context: 'missing', hold: pool }),
      new RegExp(`no context "missing" \\(it has: .*${real}.*nowhere\\)`),
    );
  });
});
