#!/usr/bin/env node
// The test command: node's test runner over the compiled output (tsc emits the decorator
// metadata Nest needs, so tests run exactly the JavaScript users get). End-to-end tests
// (*.e2e.test.js) share one real control plane that the global setup starts.
//   node scripts/test.mjs            all tests
//   node scripts/test.mjs --unit     unit tests only, no control plane
//   node scripts/test.mjs <files>    the given compiled test files
import { spawnSync } from 'node:child_process';
import { globSync } from 'node:fs';
import { availableParallelism } from 'node:os';

const args = process.argv.slice(2);
const unitOnly = args.includes('--unit');
const given = args.filter((a) => !a.startsWith('--'));
const roots = ['packages/*/dist', 'test/dist', 'sample-operator/dist', 'samples/*/dist'];
const files = given.length
  ? given
  : roots
      .flatMap((root) => globSync(`${root}/**/*.test.js`))
      // The bench's own pure logic (its charts), plain JavaScript beside it.
      .concat(globSync('bench/lib/**/*.test.mjs'))
      .filter((file) => !file.includes('node_modules'))
      .filter((file) => !unitOnly || !file.endsWith('.e2e.test.js'))
      .sort();
if (files.length === 0) {
  console.error('no compiled test files found: run `npm run build` first');
  process.exit(1);
}
const needsControlPlane = files.some((file) => file.endsWith('.e2e.test.js'));
const result = spawnSync(
  process.execPath,
  [
    '--enable-source-maps',
    '--test',
    `--test-concurrency=${Math.max(2, availableParallelism())}`,
    '--test-timeout=600000',
    ...(needsControlPlane ? ['--test-global-setup=packages/testing/dist/global-setup.js'] : []),
    ...(process.env.CI ? ['--test-reporter=spec'] : []),
    ...files,
  ],
  // This repository's e2e tests need kube-controller-manager (garbage collection, namespaces),
  // and the sample's need pods that run: fake nodes (see docs/testing.md).
  { stdio: 'inherit', env: { NESTOR_CONTROLLER_MANAGER: 'true', NESTOR_TEST_NODES: '3', ...process.env } },
);
process.exit(result.status ?? 1);
