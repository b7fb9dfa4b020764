// `nestor init` on copies of the Nest starters, without a control plane: what it writes to
// package.json, the runner's configuration and the starter's own e2e test. That the result
// builds and passes its tests is scaffold.e2e.test.ts's and nest11-app.e2e.test.ts's part.
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { initCommand } from './init-command.js';
import type { PackageJson } from './nest-project.js';
import { JEST_ESM_TRANSFORM } from './runner-setup.js';

const fixtures = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures');
const copies: string[] = [];

after(async () => {
  for (const copy of copies) await rm(copy, { recursive: true, force: true });
});

async function starter(name: 'nest12-app' | 'nest11-app'): Promise<string> {
  const app = await mkdtemp(join(tmpdir(), 'nestor-init-'));
  copies.push(app);
  await cp(join(fixtures, name), app, { recursive: true });
  return app;
}

async function init(app: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await initCommand([], {
    cwd: app,
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
  });
  return { code, stdout, stderr };
}

const manifestOf = async (app: string) =>
  JSON.parse(await readFile(join(app, 'package.json'), 'utf8')) as Required<
    Pick<PackageJson, 'dependencies' | 'devDependencies'>
  > &
    PackageJson;

describe('nestor init: package.json', () => {
  it('adds the packages the project lacks, and leaves those it lists in any section where they are', async () => {
    const app = await starter('nest12-app');
    const manifest = await manifestOf(app);
    manifest.dependencies['@nestor/cli'] = '^0.0.9';
    manifest.dependencies['@nestor/testing'] = '^0.0.9';
    manifest.peerDependencies = { '@nestor/operator': '>=0.0.9' };
    await writeFile(join(app, 'package.json'), JSON.stringify(manifest, null, 2));

    const result = await init(app);
    assert.equal(result.code, 0, result.stderr);
    const after = await manifestOf(app);
    assert.equal(after.dependencies['@nestor/cli'], '^0.0.9');
    assert.equal(after.dependencies['@nestor/testing'], '^0.0.9');
    assert.equal(after.devDependencies['@nestor/cli'], undefined, '@nestor/cli added again as a devDependency');
    assert.equal(after.devDependencies['@nestor/testing'], undefined);
    assert.equal(after.dependencies['@nestor/operator'], undefined, 'a peer dependency listed again');
    assert.deepEqual(after.peerDependencies, { '@nestor/operator': '>=0.0.9' });
  });

  it('adds all three to a starter that has none', async () => {
    const app = await starter('nest11-app');
    assert.equal((await init(app)).code, 0);
    const after = await manifestOf(app);
    assert.match(after.dependencies['@nestor/operator']!, /^\^\d/);
    assert.match(after.devDependencies['@nestor/cli']!, /^\^\d/);
    assert.match(after.devDependencies['@nestor/testing']!, /^\^\d/);
  });
});

describe('nestor init: the e2e configuration', () => {
  it('gives Vitest a test timeout as well as a hook timeout: tests wait for the operator', async () => {
    const app = await starter('nest12-app');
    assert.equal((await init(app)).code, 0);
    const config = await readFile(join(app, 'vitest.config.e2e.ts'), 'utf8');
    assert.match(config, /globalSetup: \['@nestor\/testing\/vitest-setup'\]/);
    assert.match(config, /hookTimeout: 120_000/);
    assert.match(config, /testTimeout: 60_000/);
  });

  it('adds the test timeout to a configuration an earlier init set up without one, keeping one set by hand', async () => {
    const app = await starter('nest12-app');
    const path = join(app, 'vitest.config.e2e.ts');
    const earlier = (await readFile(path, 'utf8')).replace(
      "include: ['**/*.e2e-spec.ts'],",
      "include: ['**/*.e2e-spec.ts'],\n    globalSetup: ['@nestor/testing/vitest-setup'],\n    hookTimeout: 120_000,",
    );
    await writeFile(path, earlier);
    assert.equal((await init(app)).code, 0);
    const config = await readFile(path, 'utf8');
    assert.equal(config.match(/globalSetup/g)?.length, 1);
    assert.equal(config.match(/hookTimeout/g)?.length, 1);
    assert.match(config, /testTimeout: 60_000/);

    await writeFile(path, config.replace(/testTimeout: 60_000/, 'testTimeout: 90_000'));
    assert.equal((await init(app)).code, 0);
    assert.doesNotMatch(await readFile(path, 'utf8'), /testTimeout: 60_000/);
  });
});

describe('nestor init: the starter’s own e2e test', () => {
  for (const [name, specifier] of [
    ['nest12-app', "'./../src/app.module.js'"],
    ['nest11-app', "'./../src/app.module'"],
  ] as const) {
    it(`${name}: runs its operator on the test control plane, scoped, servers off, and says so`, async () => {
      const app = await starter(name);
      const result = await init(app);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /updated test\/app\.e2e-spec\.ts: .*namespace of its own/);
      const test = await readFile(join(app, 'test', 'app.e2e-spec.ts'), 'utf8');
      assert.ok(test.includes(`import { AppModule } from ${specifier};`));
      assert.match(test, /\.overrideProvider\(OPERATOR_MODULE_OPTIONS\)/);
      assert.match(test, /namespace = await env\.createNamespace\('app'\)/);
      assert.match(test, /webhooks: \{ port: 0 \}/);
      assert.match(test, /toBe\('Hello World!'\)/);
      assert.match((await init(app)).stdout, /nothing to change/);
    });
  }

  it('keeps a test the user changed, with a note on what to change', async () => {
    const app = await starter('nest12-app');
    const path = join(app, 'test', 'app.e2e-spec.ts');
    const changed = (await readFile(path, 'utf8')).replace(
      '  afterEach(async () => {',
      "  it('/health (GET)', () => request(app.getHttpServer()).get('/health').expect(200));\n\n  afterEach(async () => {",
    );
    await writeFile(path, changed);
    const result = await init(app);
    assert.equal(result.code, 0);
    assert.equal(await readFile(path, 'utf8'), changed);
    assert.match(
      result.stdout,
      /note: test\/app\.e2e-spec\.ts boots AppModule, .*overrideProvider\(OPERATOR_MODULE_OPTIONS\)/,
    );
  });
});

describe('nestor init: src/main.ts', () => {
  for (const [name, module, call] of [
    ['nest12-app', "'./app.module.js'", 'await bootstrap();'],
    ['nest11-app', "'./app.module'", 'void bootstrap();'],
  ] as const) {
    it(`${name}: replaces the starter's HTTP app with an operator's entry point, and says so`, async () => {
      const app = await starter(name);
      const result = await init(app);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /updated src\/main\.ts: replaces the starter's HTTP app: an application context/);
      const main = await readFile(join(app, 'src', 'main.ts'), 'utf8');
      assert.ok(main.includes(`import { AppModule } from ${module};`));
      assert.match(main, /NestFactory\.createApplicationContext\(AppModule, \{\n\s+logger: operatorLogger\(\),/);
      assert.match(main, /import \{ operatorLogger \} from '@nestor\/operator';/);
      assert.match(main, /app\.enableShutdownHooks\(\);/);
      assert.doesNotMatch(main, /listen\(|NestFactory\.create\(/);
      assert.ok(main.endsWith(`${call}\n`));
      assert.match((await init(app)).stdout, /nothing to change/);
    });
  }

  it('replaces a starter main.ts an earlier init gave enableShutdownHooks', async () => {
    const app = await starter('nest11-app');
    const path = join(app, 'src', 'main.ts');
    await writeFile(
      path,
      (await readFile(path, 'utf8')).replace(
        '(AppModule);\n',
        '(AppModule);\n  app.enableShutdownHooks(); // SIGTERM: running reconciles finish, the Lease is released\n',
      ),
    );
    assert.equal((await init(app)).code, 0);
    assert.match(await readFile(path, 'utf8'), /createApplicationContext/);
  });

  it('keeps a main.ts of the user’s own, and says what it lacks and what an operator’s has', async () => {
    const app = await starter('nest12-app');
    const path = join(app, 'src', 'main.ts');
    const own = (await readFile(path, 'utf8')).replace(
      '(AppModule);\n',
      "(AppModule);\n  app.setGlobalPrefix('api');\n",
    );
    await writeFile(path, own);
    const result = await init(app);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(await readFile(path, 'utf8'), own);
    assert.doesNotMatch(result.stdout, /src\/main\.ts:/);
    assert.match(
      result.stdout,
      /note: src\/main\.ts is not the starter's: kept as it is\. It lacks NestFactory\.createApplicationContext in place of create and listen .*; \{ logger: operatorLogger\(\) \} .*; app\.enableShutdownHooks\(\)\. An operator's main\.ts:\n {4}import \{ NestFactory \}/,
    );
    assert.match(result.stdout, /^ {6}const app = await NestFactory\.createApplicationContext\(AppModule, \{$/m);
  });
});

describe('nestor init: Jest unit tests (Nest 11)', () => {
  it('runs them as ES modules, as the e2e tests, so a spec may import @nestor/operator', async () => {
    const app = await starter('nest11-app');
    assert.equal((await init(app)).code, 0);
    const manifest = (await manifestOf(app)) as PackageJson & {
      scripts: Record<string, string>;
      jest: { transform: unknown; extensionsToTreatAsEsm: string[]; rootDir: string };
    };
    assert.deepEqual(manifest.jest.transform, JEST_ESM_TRANSFORM);
    assert.deepEqual(manifest.jest.extensionsToTreatAsEsm, ['.ts']);
    assert.equal(manifest.jest.rootDir, 'src', 'the rest of the starter’s configuration is kept');
    const jest = 'node --experimental-vm-modules node_modules/jest/bin/jest.js';
    assert.equal(manifest.scripts['test'], jest);
    assert.equal(manifest.scripts['test:watch'], `${jest} --watch`);
    assert.equal(manifest.scripts['test:cov'], `${jest} --coverage`);
    assert.match(manifest.scripts['test:debug']!, /^node --experimental-vm-modules --inspect-brk /);
    assert.match((await init(app)).stdout, /nothing to change/);
  });

  it('leaves a Jest configuration of the user’s own, with a note on what to set', async () => {
    const app = await starter('nest11-app');
    const manifest = await manifestOf(app);
    const own = { ...(manifest['jest'] as object), transform: { '^.+\\.ts$': 'babel-jest' } };
    await writeFile(join(app, 'package.json'), JSON.stringify({ ...manifest, jest: own }, null, 2));
    const result = await init(app);
    assert.equal(result.code, 0, result.stderr);
    const after = (await manifestOf(app)) as PackageJson & { scripts: Record<string, string> };
    assert.deepEqual(after['jest'], own);
    assert.equal(after.scripts['test'], 'jest');
    assert.match(result.stdout, /note: package\.json "jest" has a transform of its own: .*--experimental-vm-modules/);
  });
});
