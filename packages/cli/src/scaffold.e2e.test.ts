// The user's path from `nest new` to an operator, run as a user runs it: a Nest 12 starter
// (packages/cli/fixtures/nest12-app, ESM, Vitest) gets `nestor init` and `nestor create
// api`, is built with tsc, gets its manifests written, and passes its own unit tests and the
// generated e2e test under Vitest against the shared real control plane. A Nest 11 starter
// (fixtures/nest11-app: CommonJS, Jest, ts-jest) does the same under Jest.
// The copy's node_modules is a link to this repository's, where @nestor/* are the workspace
// packages and Nest 12, TypeScript and Vitest are installed.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const cliRoot = resolve(here, '..');
const repoModules = resolve(cliRoot, '..', '..', 'node_modules');
const nestor = join(cliRoot, 'dist', 'main.js');

interface Run {
  code: number | null;
  output: string;
}

function run(command: string, args: string[], cwd: string): Promise<Run> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, CI: 'true', NO_COLOR: '1' } });
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

const node = (args: string[], cwd: string) => run(process.execPath, args, cwd);
const succeeded = (result: Run, what: string) => assert.equal(result.code, 0, `${what} failed:\n${result.output}`);

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
    assert.match(appModule, /imports: \[OperatorModule\.forRoot\(\{\}\)\]/);
    assert.match(appModule, /import \{ OperatorModule \} from '@nestor\/operator';/);
    assert.match(await readFile(join(app, 'src', 'main.ts'), 'utf8'), /app\.enableShutdownHooks\(\)/);
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
      /imports: \[OperatorModule\.forRoot\(\{\}\), CachePoolModule\]/,
    );
    const again = await node(
      [nestor, 'create', 'api', '--group', 'scaffold.nestor.dev', '--version', 'v1alpha1', '--kind', 'CachePool'],
      app,
    );
    succeeded(again, 'nestor create api, a second time');
    assert.match(again.output, /already there; nothing to change/);
  });

  it('builds with tsc, and nestor manifests writes its CRD and RBAC', async () => {
    succeeded(await node([join(repoModules, 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], app), 'tsc');
    const manifests = await node([nestor, 'manifests', '--module', 'dist/app.module.js', '--out', 'deploy'], app);
    succeeded(manifests, 'nestor manifests');
    const crds = await readFile(join(app, 'deploy', 'crds', 'crds.yaml'), 'utf8');
    assert.match(crds, /kind: CustomResourceDefinition\n[^]*name: cachepools\.scaffold\.nestor\.dev/);
    assert.match(await readFile(join(app, 'deploy', 'operator', 'rbac.yaml'), 'utf8'), /cachepools\/status/);
  });

  it('passes its own unit tests and the generated e2e test under Vitest, against the real API server', async () => {
    const vitest = join(repoModules, 'vitest', 'vitest.mjs');
    succeeded(await node([vitest, 'run'], app), 'vitest run (the starter’s unit tests)');
    const e2e = await node([vitest, 'run', '--config', 'vitest.config.e2e.ts', 'test/cache-pool.e2e-spec.ts'], app);
    succeeded(e2e, 'vitest run --config vitest.config.e2e.ts (the generated e2e test)');
    assert.match(e2e.output, /1 passed/);
  });
});

describe('nestor init and create api on a Nest 11 starter (CommonJS, Jest)', () => {
  let legacy: string;

  before(async () => {
    legacy = await mkdtemp(join(tmpdir(), 'nestor-scaffold-nest11-'));
    await cp(join(cliRoot, 'fixtures', 'nest11-app'), legacy, { recursive: true });
    await symlink(repoModules, join(legacy, 'node_modules'), 'dir');
    // The starter's tsconfig is TypeScript 5's; this repository's TypeScript is 6, which
    // refuses baseUrl and an implied rootDir unless told (TypeScript 5 refuses the option).
    const tsconfigPath = join(legacy, 'tsconfig.json');
    const tsconfig = JSON.parse(await readFile(tsconfigPath, 'utf8')) as { compilerOptions: Record<string, unknown> };
    Object.assign(tsconfig.compilerOptions, { ignoreDeprecations: '6.0', rootDir: '.' });
    await writeFile(tsconfigPath, JSON.stringify(tsconfig, null, 2));
  });

  after(async () => {
    if (legacy) await rm(legacy, { recursive: true, force: true });
  });

  it('sets up Jest to load the ES modules, builds, and passes the generated e2e test', async () => {
    succeeded(await node([nestor, 'init'], legacy), 'nestor init');
    succeeded(
      await node(
        [nestor, 'create', 'api', '--group', 'legacy.nestor.dev', '--version', 'v1', '--kind', 'Gadget'],
        legacy,
      ),
      'nestor create api',
    );
    const manifest = JSON.parse(await readFile(join(legacy, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    assert.equal(
      manifest.scripts['test:e2e'],
      'node --experimental-vm-modules node_modules/jest/bin/jest.js --config ./test/jest-e2e.json',
    );
    const jestConfig = JSON.parse(await readFile(join(legacy, 'test', 'jest-e2e.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    assert.equal(jestConfig['globalSetup'], '@nestor/testing/jest-setup');
    assert.deepEqual(jestConfig['extensionsToTreatAsEsm'], ['.ts']);
    // CommonJS sources: relative imports without an extension.
    assert.match(await readFile(join(legacy, 'src', 'app.module.ts'), 'utf8'), /from '\.\/gadget\/gadget\.module';/);
    succeeded(
      await node(
        [join(repoModules, 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json', '--rootDir', 'src'],
        legacy,
      ),
      'tsc',
    );
    const e2e = await run(
      process.execPath,
      [
        '--experimental-vm-modules',
        join(repoModules, 'jest', 'bin', 'jest.js'),
        '--config',
        './test/jest-e2e.json',
        'test/gadget.e2e-spec.ts',
      ],
      legacy,
    );
    succeeded(e2e, 'jest (the generated e2e test)');
    assert.match(e2e.output, /Tests:\s+1 passed, 1 total/);
  });
});
