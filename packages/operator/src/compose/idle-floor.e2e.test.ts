// What an operator loads, checked in a process of its own against the real API server: a
// Nest-free operator with one controller, started, loads none of what its options do not use
// (docs/BENCHMARKS.md "Floor": each costs idle memory). A resolve hook records every module
// the process resolves, ES or CommonJS; process.moduleLoadList names Node's own modules.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { TestEnvironment } from '@nestor/testing';

const PACKAGE = fileURLToPath(new URL('../../', import.meta.url));

// Run from the package, so that '@nestor/operator/runtime' is the entry a user imports.
const PROGRAM = `
import { registerHooks } from 'node:module';
const loaded = new Set();
registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); loaded.add(r.url); return r; } });
const { ConfigMap, createOperator, silentLogger } = await import('@nestor/operator/runtime');
const operator = await createOperator({
  kubeConfig: process.env.KUBECONFIG,
  readFlags: false,
  health: { port: 0 },
  metrics: { port: 0 },
  logger: () => silentLogger,
  ...JSON.parse(process.env.FLOOR_OPTIONS),
});
operator.manager.addController({ name: 'floor', resource: ConfigMap, namespace: process.env.FLOOR_NAMESPACE, reconcile: async () => {} });
await operator.start();
const builtins = process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13));
await operator.stop();
console.log(JSON.stringify({ loaded: [...loaded], builtins }));
`;

interface Loaded {
  /** Resolved URLs: file:// for packages and Nestor's files, node: for built-ins imported by name. */
  loaded: string[];
  /** Node's own modules, internal ones too (`http2`, `internal/http2/core`). */
  builtins: string[];
}

let env: TestEnvironment;
let ns: string;

before(async () => {
  env = await TestEnvironment.start();
  ns = await env.createNamespace('floor');
});

after(async () => {
  await env.stop(); // deletes the namespace
});

async function started(options: Record<string, unknown>): Promise<Loaded> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', PROGRAM], {
    cwd: PACKAGE,
    env: {
      PATH: process.env['PATH'],
      KUBECONFIG: env.kubeconfigPath,
      FLOOR_NAMESPACE: ns,
      FLOOR_OPTIONS: JSON.stringify(options),
    },
  });
  return JSON.parse(stdout.trim().split('\n').pop()!) as Loaded;
}

const matching = (urls: string[], pattern: RegExp) => urls.filter((url) => pattern.test(url));

describe('an operator loads what its options use', () => {
  it('started with default options: HTTP/2, no tracing, no webhook or sharding code, neither RxJS nor prom-client whole', async () => {
    const { loaded, builtins } = await started({});
    // What it uses is seen: the check is not vacuous.
    assert.ok(matching(loaded, /\/runtime\/cache\/informer\.js$/).length, 'the informer');
    assert.ok(builtins.includes('http2') && builtins.includes('tls'), 'HTTP/2 over TLS, the default transport');
    assert.ok(matching(loaded, /\/prom-client\/lib\/registry\.js$/).length, 'the metrics registry');
    // Tracing loads once an SDK registers a tracer provider; none has.
    assert.deepEqual(matching(loaded, /\/@opentelemetry\//), []);
    // prom-client's parts, not its index (Pushgateway, Summary, cluster aggregation, OpenTelemetry).
    assert.deepEqual(matching(loaded, /\/prom-client\/(index\.js|lib\/(pushgateway|summary|cluster)\.js)$/), []);
    assert.ok(!builtins.includes('zlib'), 'node:zlib: prom-client’s Pushgateway');
    // RxJS by module, not its index (223 modules).
    assert.deepEqual(matching(loaded, /\/rxjs\/dist\/[^/]+\/index\.js$/), []);
    // Client-node's kubeconfig parsing only (its generated API costs ~55 MB).
    assert.deepEqual(
      matching(loaded, /\/@kubernetes\/client-node\//).map((url) => url.replace(/^.*\/@kubernetes\/client-node\//, '')),
      ['dist/config_types.js'],
    );
    // No webhook route: the webhook server's listener, intake, certificates and handlers stay unloaded.
    assert.deepEqual(
      matching(
        loaded,
        /\/(serving\/webhook-(listener|routes)|webhooks\/(review-intake|self-managed-certificates|admission-handler|conversion-webhook))\.js$/,
      ),
      [],
    );
    // Unsharded: no coordinator, assigner or shard Leases.
    assert.deepEqual(matching(loaded, /\/sharding\/(shard-coordinator|shard-assigner|shard-lease)\.js$/), []);
  });

  it('over HTTP/1.1 (transport.http2: false): node:http2 stays unloaded', async () => {
    const { loaded, builtins } = await started({ transport: { http2: false } });
    assert.ok(matching(loaded, /\/runtime\/cache\/informer\.js$/).length, 'the informer');
    assert.deepEqual(
      builtins.filter((name) => name.includes('http2')),
      [],
    );
    assert.deepEqual(matching(loaded, /\/http2-(exchange|sessions)\.js$/), []);
  });

  it('sharded: loads the shard coordinator it uses', async () => {
    const { loaded } = await started({ leaderElection: { id: `floor-${ns}`, namespace: ns }, sharding: true });
    assert.ok(
      matching(loaded, /\/sharding\/shard-coordinator\.js$/).length,
      'the coordinator, loaded at createOperator',
    );
  });
});
