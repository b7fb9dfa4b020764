// The shared control plane under the runners Nest apps use: `vitest run` and `jest` run in
// the fixture projects (packages/testing/fixtures) as child processes, each with its own
// global setup starting a control plane, a test file attaching to it through the inherited
// variables and creating a namespace, and the global teardown stopping it.
//
// The Vitest run is a Nest 12 user's machine without Go: its binaries come from an envtest
// release index and archive served on 127.0.0.1 (the real kube-apiserver and etcd this
// repository builds, packed as controller-tools packs them), downloaded into an empty cache.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createGzip } from 'node:zlib';
import { ensureControlPlaneBinaries, kubernetesVersion } from './controlplane-binaries.js';
import { envtestPlatform } from './envtest-index.js';

const here = dirname(fileURLToPath(import.meta.url));
const fixtures = resolve(here, '..', 'fixtures');
const repoModules = resolve(here, '..', '..', '..', 'node_modules');

interface Run {
  code: number | null;
  output: string;
}

/** Runs a runner's CLI in a fixture folder, bounded, with the parent's shared cluster withdrawn. */
function run(fixture: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  const clean = { ...process.env };
  // The repository's own global setup exported these (and scripts/test.mjs asked for fake
  // nodes); the fixture's setup must start its own, as a user's would.
  for (const name of [
    'USE_EXISTING_CLUSTER',
    'KUBECONFIG',
    'NESTOR_SHARED_CONTROL_PLANE',
    'NODE_TEST_CONTEXT',
    'NESTOR_TEST_NODES',
  ]) {
    delete clean[name];
  }
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: join(fixtures, fixture),
      env: { ...clean, CI: 'true', NO_COLOR: '1', FORCE_COLOR: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const bound = setTimeout(() => child.kill('SIGKILL'), 240_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(bound);
      resolvePromise({ code, output });
    });
  });
}

/** The API server the fixture's global setup announced. */
function announcedServer(output: string): URL {
  const match = /\[nestor testing\] control plane ready at (https:\/\/127\.0\.0\.1:\d+)/.exec(output);
  assert.ok(match, `the global setup did not announce a control plane:\n${output}`);
  return new URL(match[1]!);
}

/** True when nothing listens on the port any more (the teardown stopped the API server). */
function refused(port: number): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolvePromise(false);
    });
    socket.once('error', () => resolvePromise(true));
  });
}

function assertPassed(result: Run, runner: string, namespacePrefix: string): void {
  assert.equal(result.code, 0, `${runner} failed:\n${result.output}`);
  assert.match(result.output, new RegExp(`fixture: created namespace ${namespacePrefix}-[0-9a-f]{8} at https://`));
}

describe('the shared control plane under Vitest and Jest', () => {
  let scratch: string;
  let index: Server;
  let indexUrl: string;

  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'nestor-runners-'));
    // An envtest archive of the real binaries, laid out as controller-tools' are.
    const real = await ensureControlPlaneBinaries({ controllerManager: true });
    const layout = join(scratch, 'layout', 'controller-tools', 'envtest');
    await mkdir(layout, { recursive: true });
    await symlink(real.kubeApiServer, join(layout, 'kube-apiserver'));
    await symlink(real.etcd, join(layout, 'etcd'));
    const version = kubernetesVersion();
    const { os, arch } = envtestPlatform();
    const name = `envtest-${version}-${os}-${arch}.tar.gz`;
    const archive = join(scratch, name);
    const tar = spawn('tar', ['-chf', '-', '-C', join(scratch, 'layout'), 'controller-tools'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await pipeline(tar.stdout, createGzip({ level: 1 }), createWriteStream(archive));
    const hash = createHash('sha512');
    await pipeline(createReadStream(archive), hash);
    const sha512 = hash.digest('hex');
    index = createServer((request, response) => {
      if (request.url === '/envtest-releases.yaml') {
        response.end(`releases:\n  ${version}:\n    ${name}:\n      hash: ${sha512}\n      selfLink: /${name}\n`);
      } else if (request.url === `/${name}`) {
        createReadStream(archive).pipe(response);
      } else {
        response.writeHead(404).end();
      }
    });
    await new Promise<void>((resolvePromise) => index.listen(0, '127.0.0.1', resolvePromise));
    indexUrl = `http://127.0.0.1:${(index.address() as AddressInfo).port}/envtest-releases.yaml`;
  });

  after(async () => {
    index?.closeAllConnections();
    await new Promise((resolvePromise) => index?.close(resolvePromise));
    await rm(scratch, { recursive: true, force: true });
  });

  it("Vitest's globalSetup, on a machine without Go: envtest binaries downloaded, one control plane, stopped after", async () => {
    const result = await run('vitest', [join(repoModules, 'vitest', 'vitest.mjs'), 'run'], {
      NESTOR_CACHE_DIR: join(scratch, 'empty-cache'),
      NESTOR_ENVTEST_INDEX_URL: indexUrl,
      NESTOR_CONTROLPLANE_SOURCE: 'download',
      GO: join(scratch, 'no-go'),
      NESTOR_CONTROLLER_MANAGER: '',
    });
    assertPassed(result, 'vitest run', 'vitest');
    assert.match(result.output, /verified and unpacked/);
    assert.match(result.output, /no kube-controller-manager/);
    assert.match(result.output, /1 passed/);
    assert.ok(await refused(Number(announcedServer(result.output).port)), 'the API server still runs after vitest');
  });

  it("Jest's globalSetup and globalTeardown (ESM through --experimental-vm-modules)", async () => {
    const result = await run('jest', [join(repoModules, 'jest', 'bin', 'jest.js'), '--ci'], {
      NODE_OPTIONS: [process.env.NODE_OPTIONS, '--experimental-vm-modules'].filter(Boolean).join(' '),
    });
    assertPassed(result, 'jest', 'jest');
    assert.match(result.output, /Tests:\s+1 passed, 1 total/);
    assert.ok(await refused(Number(announcedServer(result.output).port)), 'the API server still runs after jest');
  });
});
