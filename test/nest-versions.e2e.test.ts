// The packages' peer ranges accept Nest ^11 || ^12. One operator app (nest-probe/) runs on the
// lowest versions they accept (test/nest-floor, installed by scripts/nest-floor.mjs: @nestjs/*
// 11.0.0, reflect-metadata 0.2.0, rxjs 7.8.0) and on the highest, the ones this repository
// installs, against the real API server, in a process of its own for each: module boot,
// discovery of @Controller/@Reconcile, a denied admission review answered with the denial and
// no ERROR or stack in the log, app-wide guards kept out of webhooks, @nestjs/terminus,
// operatorLogger()'s JSON (one line per call, fields top-level), and the manager stopped before
// the app's providers are destroyed. The sources are also type-checked
// against the floor's declarations.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort, TestEnvironment, waitFor, type LocalWebhooks } from '@nestor/testing';
import type { ProbeEvent } from './nest-probe/probe-events.js';
import { ProbeProcess } from './probe-process.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const floor = join(root, 'test', 'nest-floor');
const PEER_MANIFESTS = ['packages/operator/package.json', 'packages/cli/package.json'];

const readJson = <T>(path: string) => JSON.parse(readFileSync(path, 'utf8')) as T;
const dependencies = (path: string) => readJson<{ dependencies?: Record<string, string> }>(path).dependencies ?? {};
const peers = (path: string) => readJson<{ peerDependencies?: Record<string, string> }>(path).peerDependencies ?? {};

/** The lowest version a range of `^x.y.z` alternatives accepts (the only form the packages use). */
function lowestOf(range: string): string {
  const versions = range.split('||').map((part) => {
    const version = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(part.trim());
    if (!version) throw new Error(`the peer range ${range} is not ^x.y.z alternatives: read its lowest by hand`);
    return version.slice(1).map(Number);
  });
  versions.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]! || a[2]! - b[2]!);
  return versions[0]!.join('.');
}

let env: TestEnvironment;
let webhooks: LocalWebhooks;

before(async () => {
  const prepared = spawnSync(process.execPath, [join(root, 'scripts', 'nest-floor.mjs')], { encoding: 'utf8' });
  assert.equal(prepared.status, 0, `scripts/nest-floor.mjs failed:\n${prepared.stdout}${prepared.stderr}`);
  console.log(`nest-floor: ${prepared.stdout.trim()}`);
  env = await TestEnvironment.start();
  // Only the serving certificate and its CA: the test posts reviews to the probes itself.
  webhooks = await env.installWebhooks({});
});

after(async () => {
  await webhooks?.uninstall();
  await env?.stop();
});

describe('test/nest-floor', () => {
  it('pins each peer dependency at the lowest version its range accepts', () => {
    const lowest: Record<string, string> = {};
    for (const manifest of PEER_MANIFESTS) {
      for (const [name, range] of Object.entries(peers(join(root, manifest)))) lowest[name] = lowestOf(range);
    }
    assert.deepEqual(dependencies(join(floor, 'package.json')), lowest);
  });

  it('type-checks the packages’ sources against the floor’s declarations', () => {
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const checked = spawnSync(process.execPath, [tsc, '-p', join(floor, 'tsconfig.json'), '--listFiles'], {
      encoding: 'utf8',
    });
    const files = checked.stdout.split('\n').filter((line) => line.endsWith('.d.ts'));
    const errors = checked.stdout.split('\n').filter((line) => !line.startsWith('/'));
    assert.equal(checked.status, 0, `an API newer than the peer ranges' floor:\n${errors.join('\n')}${checked.stderr}`);
    // The check is only worth something if it read the floor's declarations, and only those.
    const peersRead = (modules: string) =>
      files.filter(
        (file) =>
          /[\\/]node_modules[\\/](@nestjs[\\/]|rxjs[\\/]|reflect-metadata[\\/])/.test(file) && file.startsWith(modules),
      );
    assert.ok(peersRead(join(floor, 'node_modules')).length > 0, 'the floor’s declarations were not read');
    assert.deepEqual(peersRead(join(root, 'node_modules')), [], 'declarations of the installed versions were read');
  });
});

interface Admission {
  allowed: boolean;
  status?: { code?: number; message?: string };
}

interface ConfigMapShape {
  labels?: Record<string, string>;
  data?: Record<string, string>;
}

/** Posts an AdmissionReview of a ConfigMap's CREATE, as the API server would, and returns its response. */
function admit(port: number, path: string, namespace: string, name: string, shape: ConfigMapShape): Promise<Admission> {
  const body = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: randomUUID(),
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      operation: 'CREATE',
      namespace,
      name,
      userInfo: { username: 'admin' },
      object: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace, ...(shape.labels ? { labels: shape.labels } : {}) },
        ...(shape.data ? { data: shape.data } : {}),
      },
    },
  });
  return new Promise((resolve, reject) => {
    const call = request(
      {
        host: webhooks.host,
        port,
        path,
        method: 'POST',
        ca: webhooks.caCertificate,
        headers: { 'content-type': 'application/json' },
      },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => {
          try {
            resolve((JSON.parse(text) as { response: Admission }).response);
          } catch {
            reject(new Error(`not an AdmissionReview (${response.statusCode}): ${text}`));
          }
        });
      },
    );
    call.on('error', reject);
    call.end(body);
  });
}

const isLog = (event: ProbeEvent): event is Extract<ProbeEvent, { kind: 'log' }> => event.kind === 'log';
const STACK_FRAME = /\n\s+at /;

const installedVersion = (name: string) =>
  readJson<{ version: string }>(join(root, 'node_modules', name, 'package.json')).version;

const TARGETS = [
  {
    which: 'lowest',
    script: join(floor, 'dist', 'main.js'),
    versions: () => dependencies(join(floor, 'package.json')),
  },
  {
    which: 'highest',
    script: join(root, 'test', 'dist', 'nest-probe', 'main.js'),
    versions: () =>
      Object.fromEntries(
        Object.keys(dependencies(join(floor, 'package.json'))).map((name) => [name, installedVersion(name)]),
      ),
  },
];

for (const target of TARGETS) {
  describe(`an operator app on the ${target.which} Nest the peer ranges accept`, () => {
    let probe: ProbeProcess;
    let namespace: string;
    let started: Extract<ProbeEvent, { kind: 'started' }>;

    before(async () => {
      namespace = await env.createNamespace(`nest-${target.which}`);
      probe = new ProbeProcess(target.script, {
        KUBECONFIG: env.kubeconfigPath,
        PROBE_NAMESPACE: namespace,
        PROBE_WEBHOOK_HOST: webhooks.host,
        PROBE_WEBHOOK_PORT: String(await freePort()),
        PROBE_WEBHOOK_CERT_DIR: webhooks.certDir,
      });
      started = await probe.next('the app to start', (e): e is typeof started => e.kind === 'started');
    });

    after(() => probe?.kill());

    it('loads those versions of @nestjs/*, reflect-metadata and rxjs', async () => {
      const loaded = await probe.next(
        'the versions',
        (e): e is Extract<ProbeEvent, { kind: 'versions' }> => e.kind === 'versions',
      );
      assert.deepEqual(loaded.versions, target.versions());
    });

    it('boots the module and reconciles through @Controller and @Reconcile', async () => {
      await env.client.request('POST', `/api/v1/namespaces/${namespace}/configmaps`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'probe' },
      });
      await probe.next(
        'the reconcile of the ConfigMap',
        (e): e is ProbeEvent => e.kind === 'reconciled' && e.name === 'probe',
      );
    });

    it('answers a denied review with its denial and logs no error or stack; a broken handler is logged', async () => {
      const path = started.webhookPaths.find((p) => p.startsWith('/validate'));
      assert.ok(path, `no validating path among ${started.webhookPaths.join(', ')}`);
      const from = probe.events.length;
      const review = (name: string, shape: ConfigMapShape) => admit(started.webhookPort, path, namespace, name, shape);

      const tooBig = await review('too-big', { data: { size: '9' } });
      assert.deepEqual(
        { allowed: tooBig.allowed, code: tooBig.status?.code, message: tooBig.status?.message },
        { allowed: false, code: 422, message: 'size 9 is over 5' },
      );
      const frozen = await review('frozen', { labels: { frozen: 'true' } });
      assert.deepEqual({ allowed: frozen.allowed, code: frozen.status?.code }, { allowed: false, code: 403 });
      // Allowed: the app-wide guard, which refuses everything, is not the webhook's.
      assert.equal((await review('fine', { data: { size: '1' } })).allowed, true);

      // A handler that breaks is logged. Once that line is read, so is every line the denials
      // could have written before it (one ordered stream).
      assert.equal((await review('broken', { data: { size: '-1' } })).allowed, false);
      await probe.next(
        'the broken handler in the log',
        (e): e is ProbeEvent => isLog(e) && /size -1 is negative/.test(e.text),
        from,
      );
      const loud = probe.events
        .slice(from)
        .filter(isLog)
        .filter(
          (e) =>
            (e.level === 'error' || e.level === 'fatal' || STACK_FRAME.test(e.text)) &&
            !/size -1 is negative/.test(e.text),
        );
      assert.deepEqual(loud, [], 'a denial was logged as a failure');
    });

    it('writes one JSON line per log call through operatorLogger(), the fields top-level', async () => {
      const from = probe.events.length;
      probe.send('logger');
      const logged = await probe.next(
        'the lines operatorLogger() wrote',
        (e): e is Extract<ProbeEvent, { kind: 'logged' }> => e.kind === 'logged',
        from,
      );
      assert.deepEqual(
        logged.calls.map((lines) => lines.length),
        [1, 1, 1, 1],
        `not one line per call:\n${logged.calls.map((lines) => lines.join('\n')).join('\n--\n')}`,
      );
      const [reconciled, failed, slow, byStatic] = logged.calls.map(
        ([line]) => JSON.parse(line!) as Record<string, unknown>,
      );
      assert.deepEqual(
        [reconciled!['level'], reconciled!['message'], reconciled!['context'], reconciled!['controller']],
        ['log', 'reconciled', 'ProbeReconciler', 'echo'],
      );
      assert.equal(reconciled!['reconcileID'], 'r-1');
      assert.deepEqual(
        [failed!['level'], failed!['message'], failed!['context']],
        ['error', 'reconcile failed', 'ProbeReconciler'],
      );
      assert.match(String(failed!['stack']), /^Error: boom\n\s+at /);
      assert.equal(slow!['durationMs'], 12);
      assert.deepEqual([byStatic!['reconcileID'], byStatic!['context']], ['r-2', 'ProbeStatic']);
    });

    it('reports ready and live through @nestjs/terminus', async () => {
      await waitFor(
        async () => {
          const from = probe.events.length;
          probe.send('health');
          const health = await probe.next(
            'an answer to health',
            (e): e is Extract<ProbeEvent, { kind: 'health' }> => e.kind === 'health',
            from,
          );
          return health.ready === 'up' && health.live === 'up';
        },
        { what: 'the operator ready through its health indicator' },
      );
    });

    it('stops the manager before the application’s providers are destroyed', async () => {
      probe.send('close');
      const destroyed = await probe.next(
        'the database provider destroyed',
        (e): e is Extract<ProbeEvent, { kind: 'destroyed' }> => e.kind === 'destroyed',
      );
      assert.equal(
        destroyed.managerRunning,
        false,
        'the manager still ran when the application’s providers were destroyed',
      );
      assert.equal(await probe.exited(), 0, probe.output());
    });
  });
}
