// The user's path from `nest new` to an operator, run as a user runs it: a Nest 12 starter
// (packages/cli/fixtures/nest12-app, ESM, Vitest) gets `nestor init` and `nestor create
// api`, is built with tsc, gets its manifests written, and passes its own unit tests and the
// generated e2e test under Vitest against the shared real control plane. The copy's
// node_modules is a link to this repository's, where @nestor/* are the workspace packages
// and Nest 12, TypeScript and Vitest are installed. The app gets a webhook, as its user's
// next step, and the starter's own e2e test must still pass beside the generated one (init
// scoped it); then its controller owns a kind imported with `nestor import crd` (a CRD no
// other test installs) and the kind gets a second, stored version (test-support/next-steps.ts).
// Nest 11 apps: nest11-app.e2e.test.ts.
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { assertSucceeded, runCommand } from './test-support/run-command.js';
import {
  conversionSource,
  importableCrd,
  notStored,
  secondVersionSource,
  withConversionProvider,
  withOwnedImport,
} from './test-support/next-steps.js';
import { runOperatorMain } from './test-support/operator-process.js';
import { webhookSource, withWebhookProvider } from './test-support/webhook-source.js';

const here = dirname(fileURLToPath(import.meta.url));
const cliRoot = resolve(here, '..');
const repoModules = resolve(cliRoot, '..', '..', 'node_modules');
const nestor = join(cliRoot, 'dist', 'main.js');

const node = (args: string[], cwd: string) => runCommand(process.execPath, args, cwd);
const succeeded = assertSucceeded;

let app: string;

before(async () => {
  // The shared control plane of `npm test` (its global setup exported KUBECONFIG): the
  // generated test must attach to it, as it attaches to the one its own setup starts.
  assert.ok(process.env['KUBECONFIG'], 'run under the e2e global setup (npm test), which starts the control plane');
  app = await mkdtemp(join(tmpdir(), 'nestor-scaffold-'));
  await cp(join(cliRoot, 'fixtures', 'nest12-app'), app, { recursive: true });
  await symlink(repoModules, join(app, 'node_modules'), 'dir');
});

after(async () => {
  if (app) await rm(app, { recursive: true, force: true });
});

describe('nestor init and create api on a Nest 12 starter', () => {
  it('init adds OperatorModule, the packages, the control plane setup and a Dockerfile; again, nothing', async () => {
    const init = await node([nestor, 'init'], app);
    succeeded(init, 'nestor init');
    const appModule = await readFile(join(app, 'src', 'app.module.ts'), 'utf8');
    assert.match(appModule, /imports: \[OperatorModule\.forRoot\(\)\]/);
    assert.match(appModule, /import \{ OperatorModule \} from '@nestor\/operator';/);
    const main = await readFile(join(app, 'src', 'main.ts'), 'utf8');
    assert.match(main, /NestFactory\.createApplicationContext\(AppModule, \{\n\s+logger: operatorLogger\(\)/);
    assert.match(main, /app\.enableShutdownHooks\(\)/);
    const manifest = JSON.parse(await readFile(join(app, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
      scripts: Record<string, string>;
    };
    assert.equal(manifest.dependencies['@nestor/operator'], '^0.1.0');
    assert.equal(manifest.devDependencies['@nestor/testing'], '^0.1.0');
    assert.match(manifest.scripts['manifests']!, /^nestor manifests --module dist\/app\.module\.js/);
    assert.match(
      await readFile(join(app, 'vitest.config.e2e.ts'), 'utf8'),
      /globalSetup: \['@nestor\/testing\/vitest-setup'\]/,
    );
    const dockerfile = await readFile(join(app, 'Dockerfile'), 'utf8');
    assert.match(dockerfile, /^FROM node:24-bookworm AS build$/m);
    assert.match(dockerfile, /^FROM gcr\.io\/distroless\/nodejs24-debian12:nonroot$/m);
    assert.match(dockerfile, /^USER 65532:65532$/m);

    const again = await node([nestor, 'init'], app);
    succeeded(again, 'nestor init, a second time');
    assert.match(again.output, /already set up; nothing to change/);
  });

  it('create api refuses bad names and writes nothing', async () => {
    const bad = await node(
      [nestor, 'create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'CachePool'],
      app,
    );
    assert.equal(bad.code, 2);
    assert.match(bad.output, /--group "cache" is not a DNS subdomain with a dot/);
  });

  it('create api writes the kind, its controller, module and e2e test, and registers the module', async () => {
    const create = await node(
      [nestor, 'create', 'api', '--group', 'scaffold.nestor.dev', '--version', 'v1alpha1', '--kind', 'CachePool'],
      app,
    );
    succeeded(create, 'nestor create api');
    assert.match(
      await readFile(join(app, 'src', 'app.module.ts'), 'utf8'),
      /imports: \[OperatorModule\.forRoot\(\), CachePoolModule\]/,
    );
    const again = await node(
      [nestor, 'create', 'api', '--group', 'scaffold.nestor.dev', '--version', 'v1alpha1', '--kind', 'CachePool'],
      app,
    );
    succeeded(again, 'nestor create api, a second time');
    assert.match(again.output, /already there; nothing to change/);
  });

  it('writes files the starter’s Prettier finds formatted (its .prettierrc: 80 columns)', async () => {
    const written = [
      'src/app.module.ts',
      'src/main.ts',
      'src/cache-pool/cache-pool.resource.ts',
      'src/cache-pool/cache-pool.controller.ts',
      'src/cache-pool/cache-pool.module.ts',
      'test/app.e2e-spec.ts',
      'test/cache-pool.e2e-spec.ts',
      'vitest.config.e2e.ts',
    ];
    const prettier = join(repoModules, 'prettier', 'bin', 'prettier.cjs');
    succeeded(await node([prettier, '--check', ...written], app), 'prettier --check (the starter’s .prettierrc)');
  });

  it('takes a validating webhook added by hand, as the user’s next step', async () => {
    const folder = join(app, 'src', 'cache-pool');
    await writeFile(join(folder, 'cache-pool.webhook.ts'), webhookSource('CachePool', './cache-pool.resource.js'));
    const module = join(folder, 'cache-pool.module.ts');
    await writeFile(
      module,
      withWebhookProvider(await readFile(module, 'utf8'), 'CachePool', './cache-pool.webhook.js'),
    );
  });

  it('takes an owned kind imported with nestor import crd, and a second version of its kind', async () => {
    const { group, yaml } = importableCrd();
    const crdFile = join(app, 'gizmos.yaml');
    await writeFile(crdFile, yaml);
    succeeded(await node([nestor, 'import', 'crd', crdFile], app), 'nestor import crd');
    const folder = join(app, 'src', 'cache-pool');
    const controller = join(folder, 'cache-pool.controller.ts');
    await writeFile(
      controller,
      withOwnedImport(await readFile(controller, 'utf8'), 'CachePool', `../kinds/${group}/gizmo.v1.js`),
    );
    // v1alpha1 marked storage: false, v2 stored, a converter between them.
    const resource = join(folder, 'cache-pool.resource.ts');
    await writeFile(resource, notStored(await readFile(resource, 'utf8')));
    await writeFile(
      join(folder, 'cache-pool-v2.resource.ts'),
      secondVersionSource('CachePool', 'scaffold.nestor.dev', './cache-pool.resource.js'),
    );
    await writeFile(
      join(folder, 'cache-pool.conversion.ts'),
      conversionSource('CachePool', './cache-pool.resource.js', './cache-pool-v2.resource.js'),
    );
    const module = join(folder, 'cache-pool.module.ts');
    await writeFile(
      module,
      withConversionProvider(await readFile(module, 'utf8'), 'CachePool', './cache-pool.conversion.js'),
    );
  });

  it('builds with tsc, and nestor manifests writes its CRD and RBAC', async () => {
    succeeded(await node([join(repoModules, 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], app), 'tsc');
    const manifests = await node([nestor, 'manifests', '--module', 'dist/app.module.js', '--out', 'deploy'], app);
    succeeded(manifests, 'nestor manifests');
    const crds = await readFile(join(app, 'deploy', 'crds', 'crds.yaml'), 'utf8');
    assert.match(crds, /kind: CustomResourceDefinition\n[^]*name: cachepools\.scaffold\.nestor\.dev/);
    assert.match(await readFile(join(app, 'deploy', 'operator', 'rbac.yaml'), 'utf8'), /cachepools\/status/);
  });

  it('passes its own unit tests and every e2e test under Vitest, against the real API server', async () => {
    const vitest = join(repoModules, 'vitest', 'vitest.mjs');
    succeeded(await node([vitest, 'run'], app), 'vitest run (the starter’s unit tests)');
    // The starter's test/app.e2e-spec.ts (as init left it: AppModule, its operator scoped,
    // the webhook server off) and the generated one, as `npm run test:e2e` runs them.
    const e2e = await node([vitest, 'run', '--config', 'vitest.config.e2e.ts'], app);
    succeeded(e2e, 'vitest run --config vitest.config.e2e.ts (the starter’s and the generated e2e tests)');
    assert.match(e2e.output, /Tests\s+2 passed/);
  });

  it('runs as its container does: main.ts starts the operator, logs JSON lines, stops on SIGTERM', async () => {
    // After the e2e tests: their CRDs (the kind's, the imported one) are installed.
    const run = await runOperatorMain(app, { KUBECONFIG: process.env['KUBECONFIG']!, WATCH_NAMESPACE: 'default' });
    assert.match(run.ended, /^(SIGTERM|exit 0)$/, run.output);
    assert.match(run.output, /"message":"manager stopped"/, 'not stopped gracefully');
    for (const line of run.lines) assert.doesNotThrow(() => JSON.parse(line), `not a JSON line: ${line}`);
    assert.equal(typeof run.started['maxConcurrentReconciles'], 'number', 'the fields are not top-level keys');
    assert.doesNotMatch(run.output, /Nest application successfully started/, 'an HTTP app was started');
  });
});
