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
  if (source.includes(VITEST_SETUP)) return {};
  const test = /\btest\s*:\s*\{/.exec(source);
  if (!test || /globalSetup\s*:/.test(source)) {
    return {
      error:
        `${existing}: cannot add the global setup by itself. Add to its test options:\n` +
        `    globalSetup: ['${VITEST_SETUP}'],\n    hookTimeout: 120_000,`,
    };
  }
  const at = test.index + test[0].length;
  const indent = /\n([^\S\n]*)\S/.exec(source.slice(at))?.[1] ?? '    ';
  const lines =
    `\n${indent}globalSetup: ['${VITEST_SETUP}'], // one real kube-apiserver and etcd per run` +
    `\n${indent}hookTimeout: 120_000, // the first run may download them`;
  const content = `${source.slice(0, at)}${lines}${source.slice(at)}`;
  return { change: { path: existing, content, what: 'the e2e runs start a real control plane' } };
}

function jestSetup(root: string): { change?: FileChange } | { error: string } {
  const path = join(root, 'test', 'jest-e2e.json');
  const config = existsSync(path)
    ? (JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>)
    : {
        moduleFileExtensions: ['js', 'json', 'ts'],
        rootDir: '.',
        testEnvironment: 'node',
        testRegex: '.e2e-spec.ts$',
        transform: { '^.+\\.(t|j)s$': 'ts-jest' },
      };
  if (config['globalSetup'] === '@nestor/testing/jest-setup') return {};
  if (config['globalSetup'] || config['globalTeardown']) {
    return {
      error: `${path} has a globalSetup of its own: call @nestor/testing/jest-setup and jest-teardown from yours`,
    };
  }
  const content = `${JSON.stringify({ ...config, globalSetup: '@nestor/testing/jest-setup', globalTeardown: '@nestor/testing/jest-teardown', testTimeout: 60_000 }, null, 2)}\n`;
  return { change: { path, content, what: 'the e2e runs start a real control plane' } };
}
