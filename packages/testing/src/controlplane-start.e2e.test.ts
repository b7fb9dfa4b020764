// `nestor-controlplane start`: a control plane kept up for kubectl, its kubeconfig printed,
// the CRDs given served, and everything stopped and removed on SIGTERM.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { ApiClient } from './api-client.js';
import { waitFor } from './wait-for.js';

const bin = join(dirname(fileURLToPath(import.meta.url)), 'controlplane-cli.js');
let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nestor-start-'));
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('nestor-controlplane start', () => {
  it('keeps a control plane up with its kubeconfig printed, and stops it cleanly on SIGTERM', async () => {
    const crd = join(dir, 'widgets.yaml');
    await writeFile(
      crd,
      JSON.stringify({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'widgets.start.nestor.dev' },
        spec: {
          group: 'start.nestor.dev',
          scope: 'Namespaced',
          names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
            },
          ],
        },
      }),
    );
    // Not the run's shared control plane: a process of its own, whatever the variables say.
    const child = spawn(process.execPath, [bin, 'start', '--no-controller-manager', '--crds', crd], {
      env: { ...process.env, USE_EXISTING_CLUSTER: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let exit: number | null | undefined;
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('exit', (code) => (exit = code));
    try {
      const up = await waitFor(
        () => (exit !== undefined ? { exited: exit } : /^ {2}export KUBECONFIG=(\S+)$/m.exec(out)?.[1]),
        { timeoutMs: 120_000, what: 'the kubeconfig line' },
      );
      if (typeof up !== 'string') assert.fail(`it exited (${up.exited}) before it was up:\n${out}${err}`);
      const kubeconfigPath = up;
      assert.match(out, /^control plane up at https:\/\/127\.0\.0\.1:\d+ \(etcd, kube-apiserver\)$/m);
      assert.match(out, /^ {2}\S*kubectl get namespaces$/m);

      const kubeConfig = new KubeConfig();
      kubeConfig.loadFromFile(kubeconfigPath);
      const client = await ApiClient.fromKubeConfig(kubeConfig);
      try {
        const served = await client.request<{ resources: Array<{ name: string }> }>('GET', '/apis/start.nestor.dev/v1');
        assert.deepEqual(
          served.resources.map((r) => r.name),
          ['widgets'],
        );
      } finally {
        client.close();
      }

      child.kill('SIGTERM');
      await waitFor(() => exit !== undefined, { timeoutMs: 60_000, what: 'the command to exit after SIGTERM' });
      assert.equal(exit, 0, err);
      assert.match(err, /stopped/);
      assert.equal(existsSync(dirname(kubeconfigPath)), false, 'its files were left behind');
    } finally {
      if (exit === undefined) child.kill('SIGKILL');
    }
  });
});
