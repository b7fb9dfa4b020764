#!/usr/bin/env node
// Prepares test/nest-floor, the lowest Nest the packages' peer ranges accept, for
// test/nest-versions.e2e.test.ts (which runs this first; the build must be current):
//   test/nest-floor/node_modules    `npm ci` of its lockfile (@nestjs/* 11.0.0, rxjs 7.8.0, ...),
//                                   skipped when that lockfile is the one last installed
//   node_modules/@nestor/operator   the built package beside them: package.json and dist, no tests
//   test/nest-floor/dist            the probe app (test/dist/nest-probe), run from there
// What @nestor/operator imports besides Nest, rxjs and reflect-metadata (@nestor/core, yaml,
// prom-client, ...) resolves from the repository's node_modules, further up the tree.
// Prints one JSON line: whether it installed, and how long it took.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const floor = join(root, 'test', 'nest-floor');
const modules = join(floor, 'node_modules');
const stamp = join(modules, '.nestor-lockfile-sha256');
const builtOperator = join(root, 'packages', 'operator');
const builtProbe = join(root, 'test', 'dist', 'nest-probe');

function fail(message) {
  console.error(`nest-floor: ${message}`);
  process.exit(1);
}

for (const built of [join(builtOperator, 'dist', 'index.js'), join(builtProbe, 'main.js')]) {
  if (!existsSync(built)) fail(`${built} is missing: run \`npm run build\` first`);
}

const started = performance.now();
const lockfile = createHash('sha256')
  .update(readFileSync(join(floor, 'package-lock.json')))
  .digest('hex');
const current = existsSync(stamp) && readFileSync(stamp, 'utf8') === lockfile;
if (!current) {
  // npm ci removes node_modules first. The lockfile pins every version and checksum, so npm's
  // cache is used without asking the registry again when it has the packages (CI can keep
  // ~/.npm); a stalled download is cut after a minute and retried, the whole after 5 minutes.
  const args = ['ci', '--prefix', floor, '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'];
  const npm = spawnSync('npm', [...args, '--fetch-timeout=60000'], {
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: 300_000,
  });
  if (npm.status !== 0) fail(`npm ${args.join(' ')} failed (${npm.error?.message ?? `exit ${npm.status}`})`);
  writeFileSync(stamp, lockfile);
}
const installMs = Math.round(performance.now() - started);

// The build as a user's node_modules holds it, fresh on every run.
const operator = join(modules, '@nestor', 'operator');
rmSync(operator, { recursive: true, force: true });
mkdirSync(operator, { recursive: true });
cpSync(join(builtOperator, 'package.json'), join(operator, 'package.json'));
const runtimeOnly = (path) => !/\.test\.|\.d\.ts(\.map)?$|[\\/]test-support([\\/]|$)/.test(path);
cpSync(join(builtOperator, 'dist'), join(operator, 'dist'), { recursive: true, filter: runtimeOnly });

const probe = join(floor, 'dist');
rmSync(probe, { recursive: true, force: true });
cpSync(builtProbe, probe, { recursive: true, filter: runtimeOnly });

console.log(JSON.stringify({ installed: !current, installMs, totalMs: Math.round(performance.now() - started) }));
