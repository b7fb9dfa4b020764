// `nestor-controlplane` from a shell: help and argument errors answered before anything is
// resolved (an empty cache stays empty, no Go is run), and `helm` running the helm given.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const bin = join(dirname(fileURLToPath(import.meta.url)), 'controlplane-cli.js');
let cache: string;

/** The command with a cache of its own and no way to build: anything it resolves fails or shows. */
function run(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [bin, ...args], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: cache,
      NESTOR_CACHE_DIR: cache,
      NESTOR_CONTROLPLANE_SOURCE: 'go',
      NESTOR_ENVTEST_INDEX_URL: 'http://127.0.0.1:9/none.yaml',
      GO: join(cache, 'no-go'),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err })));
}

before(async () => {
  cache = await mkdtemp(join(tmpdir(), 'nestor-controlplane-cli-'));
});

after(async () => {
  await rm(cache, { recursive: true, force: true });
});

describe('nestor-controlplane', () => {
  for (const args of [
    ['--help'],
    ['-h'],
    ['--controller-manager', '--nodes', '--helm', '--help'],
    ['start', '--help'],
  ]) {
    it(`answers ${args.join(' ')} with its usage, resolving nothing`, async () => {
      const { code, out, err } = await run(args);
      assert.equal(code, 0, err);
      assert.match(out, /^Usage: nestor-controlplane /);
      assert.match(out, /nestor-controlplane start/);
      assert.match(out, /nestor-controlplane helm/);
      assert.equal(err, '');
      assert.deepEqual(await readdir(cache), [], 'the help looked at the cache');
    });
  }

  it('refuses an unknown option with exit 2, naming it, resolving nothing', async () => {
    const { code, err } = await run(['--nodez']);
    assert.equal(code, 2);
    assert.match(err, /Unknown option '--nodez'.*--help lists the options/);
    assert.deepEqual(await readdir(cache), []);
    const start = await run(['start', '--nodes', 'three']);
    assert.equal(start.code, 2);
    assert.match(start.err, /--nodes three: give the number of fake nodes/);
  });

  it('runs the helm the chart tests use with the arguments given, and exits with its code', async () => {
    const helm = join(cache, 'fake-helm');
    await writeFile(helm, '#!/bin/sh\necho "helm got: $*"\nexit 3\n');
    await chmod(helm, 0o755);
    try {
      const { code, out } = await run(['helm', 'lint', 'chart', '--strict', '--help'], { NESTOR_HELM: helm });
      assert.equal(out, 'helm got: lint chart --strict --help\n');
      assert.equal(code, 3);
    } finally {
      await rm(helm);
    }
  });

  it('says why when there is no helm and no Go to build one', async () => {
    const { code, err } = await run(['helm', 'version']);
    assert.equal(code, 1);
    assert.match(err, /Cannot build helm: Go is not installed/);
  });
});
