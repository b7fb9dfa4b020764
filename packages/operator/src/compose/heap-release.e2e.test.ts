// Memory given back once idle (HeapRelease), checked in a process of its own as a pod runs it
// (node --expose-gc, the generated Deployment's NODE_OPTIONS), against the real API server: a
// Nest-free operator lists a namespace of ConfigMaps, goes idle, and gives back what start-up
// and the list grew; without --expose-gc it says why it does not.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { TestEnvironment } from '@nestor/testing';
import { OPERATOR_NODE_OPTIONS } from '../manifests/deployment.js';
import { createConfigMap, parallel } from '../test-support/e2e-helpers.js';

const PACKAGE = fileURLToPath(new URL('../../', import.meta.url));

// Its debug lines on stdout, one a line.
const PROGRAM = `
const { ConfigMap, createOperator } = await import('@nestor/operator/runtime');
const line = (message) => process.stdout.write(message + '\\n');
const logger = { debug: line, info: line, warn: line, error: line };
const operator = await createOperator({
  kubeConfig: process.env.KUBECONFIG,
  readFlags: false,
  health: { port: 0 },
  metrics: { port: 0 },
  logger: () => logger,
  heapRelease: { intervalMs: 500 },
});
operator.manager.addController({ name: 'idle', resource: ConfigMap, namespace: process.env.NAMESPACE, reconcile: async () => {} });
await operator.start();
`;

let env: TestEnvironment;
let ns: string;

before(async () => {
  env = await TestEnvironment.start();
  ns = await env.createNamespace('heap-release');
  const payload = 'x'.repeat(4096);
  await parallel(
    Array.from({ length: 1000 }, (_, i) => `cm-${i}`),
    16,
    (name) => createConfigMap(env.client, ns, name, { data: { payload } }),
  );
});

after(async () => {
  await env.stop(); // deletes the namespace
});

/** Starts the operator with `flags` and resolves with the first of its lines `pattern` matches. */
async function firstLine(flags: string[], pattern: RegExp): Promise<RegExpExecArray> {
  const child = spawn(process.execPath, [...flags, '--input-type=module', '-e', PROGRAM], {
    cwd: PACKAGE,
    env: { PATH: process.env['PATH'], KUBECONFIG: env.kubeconfigPath, NAMESPACE: ns },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const timeout = AbortSignal.timeout(60_000);
    for await (const line of createInterface({ input: child.stdout, signal: timeout })) {
      const match = pattern.exec(line);
      if (match) return match;
    }
    throw new Error(`the operator ended without a line matching ${pattern}`);
  } finally {
    child.kill('SIGKILL');
  }
}

describe('an idle operator gives memory back', () => {
  it('run as its Deployment runs it: once idle, its RSS falls', async () => {
    const [, before, after] = await firstLine(
      OPERATOR_NODE_OPTIONS.split(/\s+/),
      /idle: released memory, RSS ([\d.]+) -> ([\d.]+) MB/,
    );
    assert.ok(Number(after) < Number(before), `RSS ${before} -> ${after} MB`);
  });

  it('without --expose-gc it says why it gives nothing back', async () => {
    const { input } = await firstLine(['--max-semi-space-size=4'], /idle memory is not given back|released memory/);
    assert.match(input, /node runs without --expose-gc/);
  });
});
