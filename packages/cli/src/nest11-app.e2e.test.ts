// A Nest 11 app, as most apps running today were made (`@nestjs/cli@11 new`: CommonJS,
// Jest 30, ts-jest, TypeScript 5), meets Nestor the way its user does: `nestor init` and
// `nestor create api`, then `npm install` of the packed @nestor/* packages beside the
// starter's own dependencies from the npm registry (no --legacy-peer-deps), `nest build`
// with its own TypeScript, its own unit tests, `nestor manifests` from the installed CLI,
// and its e2e tests (the starter's own, as init left it, and the generated one; the app
// has a webhook by then) under Jest on @nestjs/core 11 against the shared real control
// plane. Nothing of this repository's node_modules is used by the app.
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { assertSucceeded, runCommand } from './test-support/run-command.js';
import { webhookSource, withWebhookProvider } from './test-support/webhook-source.js';

const here = dirname(fileURLToPath(import.meta.url));
const cliRoot = resolve(here, '..');
const packagesRoot = resolve(cliRoot, '..');
const NESTOR_PACKAGES = ['core', 'operator', 'testing', 'cli'] as const;

let work: string;
let app: string;
let installed: ReturnType<typeof runCommand> | undefined;

const node = (args: string[], options?: { timeoutMs?: number }) => runCommand(process.execPath, args, app, options);

async function versionOf(module: string): Promise<string> {
  const manifest = JSON.parse(await readFile(join(app, 'node_modules', module, 'package.json'), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}

/** Every copy of a package in the app's tree: more than one @nestjs/core breaks Nest's DI. */
async function copiesOf(module: string, dir = join(app, 'node_modules')): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    if (!entry.isDirectory()) continue;
    const path = join(dir, entry.name);
    if (entry.name.startsWith('@')) {
      found.push(...(await copiesOf(module, path)));
      continue;
    }
    if (path.endsWith(join('node_modules', module))) found.push(path);
    found.push(...(await copiesOf(module, join(path, 'node_modules'))));
  }
  return found;
}

before(async () => {
  assert.ok(process.env['KUBECONFIG'], 'run under the e2e global setup (npm test), which starts the control plane');
  work = await mkdtemp(join(tmpdir(), 'nestor-nest11-'));
  app = join(work, 'app');
  await cp(join(cliRoot, 'fixtures', 'nest11-app'), app, { recursive: true });

  // The packages as npm would publish them (the build is current: `npm test` builds first).
  const tarballs = new Map<string, string>();
  for (const name of NESTOR_PACKAGES) {
    const packed = await runCommand(
      'npm',
      ['pack', '--ignore-scripts', '--json', '--pack-destination', work],
      join(packagesRoot, name),
    );
    assertSucceeded(packed, `npm pack of @nestor/${name}`);
    const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
    tarballs.set(`@nestor/${name}`, `file:${join(work, filename)}`);
  }

  assertSucceeded(await node([join(cliRoot, 'dist', 'main.js'), 'init']), 'nestor init');
  assertSucceeded(
    await node([
      join(cliRoot, 'dist', 'main.js'),
      'create',
      'api',
      '--group',
      'legacy.nestor.dev',
      '--version',
      'v1',
      '--kind',
      'Gadget',
    ]),
    'nestor create api',
  );
  // The user's next step: a validating webhook on the kind.
  const folder = join(app, 'src', 'gadget');
  await writeFile(join(folder, 'gadget.webhook.ts'), webhookSource('Gadget', './gadget.resource'));
  const module = join(folder, 'gadget.module.ts');
  await writeFile(module, withWebhookProvider(await readFile(module, 'utf8'), 'Gadget', './gadget.webhook'));

  // init wrote the registry ranges (^0.1.0); this app takes the tarballs instead, and the
  // packages' own dependencies on each other (@nestor/core 0.1.0) are pointed at them too.
  const manifestPath = join(app, 'package.json');
  const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as Record<string, Record<string, string>>;
  for (const field of ['dependencies', 'devDependencies'])
    for (const dependency of Object.keys(manifest[field]!))
      if (tarballs.has(dependency)) manifest[field]![dependency] = tarballs.get(dependency)!;
  manifest['overrides'] = Object.fromEntries(tarballs);
  await writeFile(manifestPath, JSON.stringify(manifest, null, 2));

  installed = runCommand('npm', ['install', '--no-audit', '--no-fund'], app, { timeoutMs: 480_000 });
});

after(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('a Nest 11 app (CommonJS, Jest) with the packed packages', () => {
  it('installs from the npm registry without --legacy-peer-deps, with one Nest 11 core', async () => {
    const install = await installed!;
    assertSucceeded(
      install,
      'npm install of the Nest 11 starter with the packed @nestor/* packages (this test needs the npm registry, as npm ci does)',
    );
    assert.doesNotMatch(install.output, /ERESOLVE|peer dep/i);
    assert.match(await versionOf('@nestjs/core'), /^11\./);
    assert.match(await versionOf('typescript'), /^5\./);
    assert.deepEqual(await copiesOf('@nestjs/core'), [join(app, 'node_modules', '@nestjs', 'core')]);
  });

  it('builds with nest build and its own TypeScript 5, and passes its unit tests', async () => {
    await installed;
    assertSucceeded(await node([join('node_modules', '@nestjs', 'cli', 'bin', 'nest.js'), 'build']), 'nest build');
    const compiled = await readFile(join(app, 'dist', 'app.module.js'), 'utf8');
    assert.match(compiled, /require\("@nestor\/operator"\)/, 'the build is CommonJS and requires the ES module');
    const unit = await node([join('node_modules', 'jest', 'bin', 'jest.js')]);
    assertSucceeded(unit, 'jest (the starter’s unit tests)');
  });

  it('writes its manifests with the installed nestor CLI from the CommonJS build', async () => {
    const manifests = await node([
      join('node_modules', '@nestor', 'cli', 'dist', 'main.js'),
      'manifests',
      '--module',
      'dist/app.module.js',
      '--out',
      'deploy',
    ]);
    assertSucceeded(manifests, 'nestor manifests');
    const crds = await readFile(join(app, 'deploy', 'crds', 'crds.yaml'), 'utf8');
    assert.match(crds, /name: gadgets\.legacy\.nestor\.dev/);
  });

  it('passes every e2e test under Jest, on @nestjs/core 11, against the real API server', async () => {
    // The starter's test/app.e2e-spec.ts (as init left it: AppModule, its operator scoped,
    // the webhook server off) and the generated one, as `npm run test:e2e` runs them.
    const e2e = await node(
      ['--experimental-vm-modules', join('node_modules', 'jest', 'bin', 'jest.js'), '--config', './test/jest-e2e.json'],
      { timeoutMs: 300_000 },
    );
    assertSucceeded(e2e, 'jest (the starter’s and the generated e2e tests)');
    assert.match(e2e.output, /Tests:\s+2 passed, 2 total/);
  });
});
