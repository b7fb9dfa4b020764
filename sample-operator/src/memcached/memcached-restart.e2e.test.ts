// The sample operator serves the conversion of the kind it reconciles, and is restarted
// (SIGKILL, then started again as kubelet would) while Memcacheds are being written. The CRD
// stores v1beta1 here (a storage migration under way), so every Memcached the operator reads
// at v1alpha1 goes through its own /convert: while it is down the API server can neither
// store nor serve the kind, and when it comes back its webhook server must answer before its
// informers list the kind, or its first LIST fails on itself. It runs as the real process
// (dist/main.js), on a control plane of its own: the CRD's storage and conversion are changed.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { customResourceDefinition, KubeApiError } from '@nestor/operator';
import { TestEnvironment, waitFor, type LocalWebhooks } from '@nestor/testing';
import type { DeploymentObject } from '../kube-types.js';
import { MemcachedV1beta1 } from './memcached-v1beta1.resource.js';
import { Memcached } from './memcached.resource.js';

const MAIN = fileURLToPath(new URL('../main.js', import.meta.url));
const PINNED_NODE = fileURLToPath(new URL('../../../node_modules/.bin/node', import.meta.url));
const NODE = existsSync(PINNED_NODE) ? PINNED_NODE : process.execPath;
const OBJECTS = 40;

let env: TestEnvironment;
let webhooks: LocalWebhooks;
let ns: string;

/** The sample as `npm start` runs it, on one namespace, serving /convert where the CRD says. */
class SampleProcess {
  readonly lines: string[] = [];
  readonly exited: Promise<void>;
  private readonly child: ChildProcess;

  constructor() {
    this.child = spawn(NODE, ['--max-semi-space-size=4', MAIN], {
      env: {
        ...process.env,
        KUBECONFIG: env.kubeconfigPath,
        WATCH_NAMESPACE: ns,
        WEBHOOK_PORT: String(webhooks.port),
        WEBHOOK_CERT_PATH: webhooks.certDir,
        METRICS_BIND_ADDRESS: '0',
        HEALTH_PROBE_BIND_ADDRESS: '0',
        LOG_FORMAT: 'text',
        NO_COLOR: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
    for (const stream of [this.child.stdout!, this.child.stderr!]) {
      let buffered = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        buffered += chunk;
        const lines = buffered.split('\n');
        buffered = lines.pop()!;
        this.lines.push(...lines);
      });
    }
  }

  /** The index of the first line matching, or -1. */
  lineOf(pattern: RegExp): number {
    return this.lines.findIndex((line) => pattern.test(line));
  }

  async kill(): Promise<void> {
    this.child.kill('SIGKILL');
    await this.exited;
  }

  tail(): string {
    return this.lines.slice(-40).join('\n');
  }
}

const memcacheds = (version: string, name = '') =>
  `/apis/cache.example.com/${version}/namespaces/${ns}/memcacheds/${name}`;

/** Writes the size of `name` through either version (they alternate); creates it when missing. */
async function write(name: string, size: number): Promise<void> {
  const beta = size % 2 === 0;
  const spec = beta ? { replicas: size } : { size };
  const version = beta ? 'v1beta1' : 'v1alpha1';
  try {
    await env.client.request('PATCH', memcacheds(version, name), { spec }, 'application/merge-patch+json');
  } catch (error) {
    if (!(error instanceof KubeApiError && error.status === 404)) throw error;
    await env.client.request('POST', memcacheds(version), {
      apiVersion: `cache.example.com/${version}`,
      kind: 'Memcached',
      metadata: { name },
      spec,
    });
  }
}

/** Every Memcached's Deployment runs its last written size, and its status describes its generation. */
async function converged(sizes: Map<string, number>): Promise<boolean> {
  const [list, deployments] = await Promise.all([
    env.client.request<{ items: Memcached[] }>('GET', memcacheds('v1alpha1')),
    env.client.request<{ items: DeploymentObject[] }>('GET', `/apis/apps/v1/namespaces/${ns}/deployments`),
  ]);
  const replicas = new Map(deployments.items.map((d) => [d.metadata?.name, d.spec?.replicas]));
  return (
    list.items.length === sizes.size &&
    list.items.every(
      (m) =>
        m.spec.size === sizes.get(m.metadata.name!) &&
        replicas.get(m.metadata.name!) === m.spec.size &&
        m.status?.observedGeneration === m.metadata.generation,
    )
  );
}

before(async () => {
  const crd = customResourceDefinition(Memcached, MemcachedV1beta1);
  const migrating = {
    ...crd,
    spec: { ...crd.spec, versions: crd.spec.versions.map((v) => ({ ...v, storage: v.name === 'v1beta1' })) },
  };
  env = await TestEnvironment.start({ useExistingCluster: false, crds: [migrating] });
  ns = await env.createNamespace('memcached-restart');
  webhooks = await env.installWebhooks({ conversions: [crd] });
});
after(async () => {
  await webhooks?.uninstall().catch(() => {});
  await env?.stop();
});

describe('the sample operator, serving its own kind’s conversion, restarted while it is written', () => {
  it('serves /convert before its informers list the kind, and converges on every write made during the restart', async (t) => {
    let operator = new SampleProcess();
    const sizes = new Map<string, number>();
    try {
      // Until the operator serves /convert, nothing of the kind can be stored.
      await waitFor(
        async () => {
          await write('cache-0', 1);
          return true;
        },
        { timeoutMs: 30_000, what: 'the first Memcached stored through the operator’s conversion' },
      ).catch((error: Error) => assert.fail(`${error.message}\n${operator.tail()}`));
      sizes.set('cache-0', 1);
      for (let i = 1; i < OBJECTS; i++) {
        await write(`cache-${i}`, 1 + (i % 3));
        sizes.set(`cache-${i}`, 1 + (i % 3));
      }
      await waitFor(() => converged(sizes), { timeoutMs: 60_000, what: 'the first reconciles' }).catch((error: Error) =>
        assert.fail(`${error.message}\n${operator.tail()}`),
      );

      // Load: a writer changing sizes through both versions and adding Memcacheds, without
      // pause; a write refused (the conversion is away) is tried again on the next turn.
      let writing = true;
      let refused = 0;
      let written = 0;
      const writer = (async () => {
        for (let turn = 0; writing; turn++) {
          const name = turn % 4 === 3 ? `late-${turn}` : `cache-${turn % OBJECTS}`;
          const size = 1 + ((turn * 7) % 5);
          try {
            await write(name, size);
            sizes.set(name, size);
            written++;
          } catch {
            refused++;
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        }
      })();

      await new Promise((resolve) => setTimeout(resolve, 500));
      await operator.kill();
      const writtenAtKill = written;
      await waitFor(() => refused > 5, { what: 'writes refused while the conversion is down' });
      const restartedAt = Date.now();
      operator = new SampleProcess();
      await waitFor(() => written > writtenAtKill + 20, {
        timeoutMs: 60_000,
        what: 'writes stored again after the restart',
      }).catch((error: Error) => assert.fail(`${error.message}\n${operator.tail()}`));
      writing = false;
      await writer;

      await waitFor(() => converged(sizes), { timeoutMs: 60_000, what: 'every write reconciled' }).catch(
        (error: Error) => assert.fail(`${error.message}\n${operator.tail()}`),
      );
      t.diagnostic(
        `${written} writes, ${refused} refused while the conversion was down; ${sizes.size} Memcacheds converged ${Date.now() - restartedAt} ms after the restart`,
      );
      // The order that keeps it from waiting on itself: /convert served, then the manager's
      // informers list, and never a failed LIST or WATCH of the kind.
      const serving = operator.lineOf(/serving .*\/convert/);
      const started = operator.lineOf(/manager started/);
      assert.ok(serving >= 0 && started > serving, `/convert served before the manager started:\n${operator.tail()}`);
      assert.equal(
        operator.lineOf(/(list|watch) of memcacheds.*failed/),
        -1,
        `no failed LIST or WATCH of the kind:\n${operator.tail()}`,
      );
    } finally {
      await operator.kill();
    }
  });
});
