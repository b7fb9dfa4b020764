// A Nest 11 app, as most apps running today were made (`@nestjs/cli@11 new`: CommonJS,
// Jest 30, ts-jest, TypeScript 5), meets Nestor the way its user does: `npm install` of the
// packed @nestor/* packages beside the starter's own dependencies from the npm registry (no
// --legacy-peer-deps), `nestor init` and `nestor create api` from the installed CLI (with the
// starter's Prettier installed, which formats what they write), `nest build`
// with its own TypeScript, its own unit tests and one written from docs/testing.md under its
// `npm test`, its own lint and format checks on what init and create api wrote, `nestor
// manifests` from the installed CLI, and its e2e tests (the starter's own, as init left it, and the generated one; the app
// has a webhook by then) under Jest on @nestjs/core 11 against the shared real control
// plane. Nothing of this repository's node_modules is used by the app.
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { assertSucceeded, runCommand } from './test-support/run-command.js';
import { fakeClientSpecSource } from './test-support/fake-client-spec.js';
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

  // As its user does after `nest new` (which installed the starter's dependencies):
  // `npm install -D @nestor/cli` (the packed packages here, through overrides also where they
  // depend on each other), then `npx nestor init`, which keeps the ranges the project lists.
  const manifestPath = join(app, 'package.json');
  const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as Record<string, Record<string, string>>;
  manifest['dependencies']!['@nestor/operator'] = tarballs.get('@nestor/operator')!;
  manifest['devDependencies']!['@nestor/cli'] = tarballs.get('@nestor/cli')!;
  manifest['devDependencies']!['@nestor/testing'] = tarballs.get('@nestor/testing')!;
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

  it('takes nestor init and create api from the installed CLI, and the user’s next steps', async () => {
    const nestor = join('node_modules', '@nestor', 'cli', 'dist', 'main.js');
    assertSucceeded(await node([nestor, 'init']), 'nestor init');
    const create = ['create', 'api', '--group', 'legacy.nestor.dev', '--version', 'v1', '--kind', 'Gadget'];
    assertSucceeded(await node([nestor, ...create]), 'nestor create api');
    // A unit test with the fake client, then a validating webhook on the kind.
    const folder = join(app, 'src', 'gadget');
    await writeFile(
      join(folder, 'gadget.controller.spec.ts'),
      fakeClientSpecSource('Gadget', 'gadget', 'legacy.nestor.dev', 'v1'),
    );
    await writeFile(join(folder, 'gadget.webhook.ts'), webhookSource('Gadget', './gadget.resource'));
    const module = join(folder, 'gadget.module.ts');
    await writeFile(module, withWebhookProvider(await readFile(module, 'utf8'), 'Gadget', './gadget.webhook'));
  });

  it('builds with nest build and its own TypeScript 5, and passes its unit tests under npm test', async () => {
    await installed;
    assertSucceeded(await node([join('node_modules', '@nestjs', 'cli', 'bin', 'nest.js'), 'build']), 'nest build');
    const compiled = await readFile(join(app, 'dist', 'app.module.js'), 'utf8');
    assert.match(compiled, /require\("@nestor\/operator"\)/, 'the build is CommonJS and requires the ES module');
    // The starter's spec and the one with the fake client (it imports @nestor/operator).
    const unit = await runCommand('npm', ['test'], app);
    assertSucceeded(unit, 'npm test (the starter’s unit test and one written from docs/testing.md)');
    assert.match(unit.output, /Tests:\s+2 passed, 2 total/);
  });

  it('passes its own lint and format checks on every file init and create api wrote', async () => {
    const written = [
      'src/app.module.ts',
      'src/main.ts',
      'src/gadget/gadget.resource.ts',
      'src/gadget/gadget.controller.ts',
      'test/app.e2e-spec.ts',
      'test/gadget.e2e-spec.ts',
    ];
    // The starter's `npm run lint` without --fix (eslint-plugin-prettier, typescript-eslint's
    // type-checked rules), and its Prettier.
    const lint = await node([join('node_modules', 'eslint', 'bin', 'eslint.js'), '--max-warnings', '0', ...written]);
    assertSucceeded(lint, 'eslint (the starter’s configuration)');
    const format = await node([join('node_modules', 'prettier', 'bin', 'prettier.cjs'), '--check', ...written]);
    assertSucceeded(format, 'prettier --check (the starter’s .prettierrc)');
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
