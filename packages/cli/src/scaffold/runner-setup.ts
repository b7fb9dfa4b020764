// The e2e runner's global setup: @nestor/testing starts one real control plane per test run
// before the workers, which attach to it through the variables it exports.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FileChange } from './file-changes.js';
import type { NestProject } from './nest-project.js';

const VITEST_SETUP = '@nestor/testing/vitest-setup';
const VITEST_CONFIGS = [
  'vitest.config.e2e.ts',
  'vitest.config.e2e.mts',
  'vitest.config.e2e.mjs',
  'vitest.config.e2e.js',
];

export const NEW_VITEST_E2E_CONFIG = `import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globals: true,
    root: './',
    include: ['**/*.e2e-spec.ts'],
    globalSetup: ['${VITEST_SETUP}'],
    hookTimeout: 120_000, // the first run may download the control plane
    testTimeout: 60_000, // a test waits for the operator to converge (Vitest's default is 5 s)
  },
});
`;

/** The change to the runner's e2e configuration, none when it has the setup, or what to do by hand. */
export function runnerSetupChange(project: NestProject): { change?: FileChange } | { error: string } {
  return project.runner === 'vitest' ? vitestSetup(project.root) : jestSetup(project.root);
}

function vitestSetup(root: string): { change?: FileChange } | { error: string } {
  const existing = VITEST_CONFIGS.map((name) => join(root, name)).find((path) => existsSync(path));
  if (!existing) {
    return {
      change: {
        path: join(root, 'vitest.config.e2e.ts'),
        content: NEW_VITEST_E2E_CONFIG,
        what: 'e2e tests against a real control plane',
      },
    };
  }
  const source = readFileSync(existing, 'utf8');
  const hasSetup = source.includes(VITEST_SETUP);
  const test = /\btest\s*:\s*\{/.exec(source);
  if (!hasSetup && (!test || /globalSetup\s*:/.test(source))) {
    return {
      error:
        `${existing}: cannot add the global setup by itself. Add to its test options:\n` +
        `    globalSetup: ['${VITEST_SETUP}'],\n    hookTimeout: 120_000,\n    testTimeout: 60_000,`,
    };
  }
  // What the configuration sets itself is kept; a project set up before testTimeout was
  // written gets it on the next run.
  const lines = [
    ...(hasSetup ? [] : [`globalSetup: ['${VITEST_SETUP}'], // one real kube-apiserver and etcd per run`]),
    ...(hasSetup || /\bhookTimeout\s*:/.test(source)
      ? []
      : ['hookTimeout: 120_000, // the first run may download them']),
    ...(/\btestTimeout\s*:/.test(source)
      ? []
      : ['testTimeout: 60_000, // a test waits for the operator to converge (the default is 5 s)']),
  ];
  if (lines.length === 0 || !test) return {};
  const at = test.index + test[0].length;
  const indent = /\n([^\S\n]*)\S/.exec(source.slice(at))?.[1] ?? '    ';
  const content = `${source.slice(0, at)}${lines.map((line) => `\n${indent}${line}`).join('')}${source.slice(at)}`;
  return {
    change: {
      path: existing,
      content,
      what: hasSetup ? 'a test timeout for tests that wait' : 'the e2e runs start a real control plane',
    },
  };
}

/**
 * Jest: `@nestor/*` are ES modules, which Jest's CommonJS runtime cannot require ("Must use
 * import to load ES Module"). The e2e tests therefore run as ES modules: ts-jest emits ESM
 * (`useESM`, module ESNext) and Jest runs under Node's VM modules (`test:e2e` with
 * `--experimental-vm-modules`). The app's CommonJS sources load unchanged through Jest's
 * resolver; its unit tests keep their own configuration.
 */
export const JEST_ESM_TRANSFORM = {
  '^.+\\.ts$': [
    'ts-jest',
    { useESM: true, tsconfig: { module: 'ESNext', moduleResolution: 'Bundler', isolatedModules: true } },
  ],
};
const STARTER_TRANSFORM = JSON.stringify({ '^.+\\.(t|j)s$': 'ts-jest' });

function jestSetup(root: string): { change?: FileChange } | { error: string } {
  const path = join(root, 'test', 'jest-e2e.json');
  const config = existsSync(path)
    ? (JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>)
    : { moduleFileExtensions: ['js', 'json', 'ts'], rootDir: '.', testEnvironment: 'node', testRegex: '.e2e-spec.ts$' };
  if (config['globalSetup'] === '@nestor/testing/jest-setup') return {};
  if (config['globalSetup'] || config['globalTeardown']) {
    return {
      error: `${path} has a globalSetup of its own: call @nestor/testing/jest-setup and jest-teardown from yours`,
    };
  }
  if (config['transform'] !== undefined && JSON.stringify(config['transform']) !== STARTER_TRANSFORM) {
    return {
      error:
        `${path} has a transform of its own. @nestor/* are ES modules: set ts-jest's useESM (module ESNext), ` +
        `extensionsToTreatAsEsm ['.ts'], run Jest with node --experimental-vm-modules, and add ` +
        `globalSetup '@nestor/testing/jest-setup', globalTeardown '@nestor/testing/jest-teardown' (docs/testing.md)`,
    };
  }
  const content = `${JSON.stringify(
    {
      ...config,
      extensionsToTreatAsEsm: ['.ts'],
      transform: JEST_ESM_TRANSFORM,
      globalSetup: '@nestor/testing/jest-setup',
      globalTeardown: '@nestor/testing/jest-teardown',
      testTimeout: 60_000,
    },
    null,
    2,
  )}\n`;
  return { change: { path, content, what: 'e2e tests as ES modules, against a real control plane' } };
}

const JEST_UNDER_VM_MODULES = 'node --experimental-vm-modules node_modules/jest/bin/jest.js';

/** The `test:e2e` script running Jest under Node's VM modules (what ESM test files need). */
export function jestE2eScript(script: string | undefined): string | undefined {
  if (script === undefined) return `${JEST_UNDER_VM_MODULES} --config ./test/jest-e2e.json`;
  return jestEsmScript(script);
}

/**
 * A script that runs Jest (`jest --watch`, `node --inspect-brk ... node_modules/.bin/jest`)
 * under Node's VM modules; undefined when it runs no Jest or does so already.
 */
export function jestEsmScript(script: string): string | undefined {
  if (/^jest(\s|$)/.test(script)) return script.replace(/^jest/, JEST_UNDER_VM_MODULES);
  if (/^node\s/.test(script) && /\bjest\b/.test(script) && !script.includes('--experimental-vm-modules')) {
    return script.replace(/^node\s/, 'node --experimental-vm-modules ');
  }
  return undefined;
}

/** A Jest configuration with init's ES module transform. */
export function isEsmJestConfig(config: unknown): boolean {
  const transform = (config as { transform?: unknown } | undefined)?.transform;
  return JSON.stringify(transform) === JSON.stringify(JEST_ESM_TRANSFORM);
}

const JEST_CONFIG_FILES = [
  'jest.config.ts',
  'jest.config.js',
  'jest.config.mjs',
  'jest.config.cjs',
  'jest.config.json',
];

/**
 * The unit tests' Jest configuration (package.json "jest", as `nest new` writes it) made to
 * run them as ES modules, as the e2e tests run: a spec that imports `@nestor/operator`
 * (docs/testing.md, "Unit tests without an API server") fails under Jest's CommonJS
 * runtime. A configuration of the user's own is left alone, with a note.
 */
export function jestUnitConfig(root: string, config: unknown): { config?: Record<string, unknown>; note?: string } {
  const how =
    "extensionsToTreatAsEsm: ['.ts'], ts-jest with useESM (module ESNext), and Jest run under " +
    'node --experimental-vm-modules (docs/testing.md, "Jest (Nest 11 apps)")';
  if (config === undefined) {
    const file = JEST_CONFIG_FILES.find((name) => existsSync(join(root, name)));
    return file ? { note: `${file}: for unit tests that import @nestor/*, run them as ES modules: ${how}` } : {};
  }
  const current = config as Record<string, unknown>;
  if (isEsmJestConfig(current)) return {};
  if (JSON.stringify(current['transform']) !== STARTER_TRANSFORM) {
    return { note: `package.json "jest" has a transform of its own: for unit tests that import @nestor/*, ${how}` };
  }
  return { config: { ...current, extensionsToTreatAsEsm: ['.ts'], transform: JEST_ESM_TRANSFORM } };
}
