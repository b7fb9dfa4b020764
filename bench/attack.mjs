#!/usr/bin/env node
// The hostile-input suite (issue 25): attacks an operator's webhook server could meet from
// anyone who can write an object or reach port 9443, sent to Nestor's WebhookServer and to
// controller-runtime's webhook.Server side by side, each case on a fresh server with a
// legitimate client beside it. No control plane: the servers are attacked directly.
//
//   npm run attack                      every attack, ~10 min on 2 cores
//   npm run attack -- --quick           shorter holds and fewer connections, ~5 min
//   node bench/attack.mjs --only conversion-data,http2:idle --impls nestor --label before
//
// Writes bench/results/<date>-attack[-label].json and .md. Never part of `npm test`.
import { spawnSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { OPERATOR_NODE_OPTIONS } from '@nestor/operator/manifests';
import * as arrayBomb from './lib/attacks/array-bomb.mjs';
import * as conversionData from './lib/attacks/conversion-data.mjs';
import * as deepObject from './lib/attacks/deep-object.mjs';
import { attackFixtures, IMPLS, runCase, seconds } from './lib/attacks/harness.mjs';
import * as http2 from './lib/attacks/http2.mjs';
import * as plainValues from './lib/attacks/plain-values.mjs';
import * as protoKey from './lib/attacks/proto-key.mjs';
import { renderAttackReport } from './lib/attacks/report.mjs';
import * as stalledBodies from './lib/attacks/stalled-bodies.mjs';
import { killAllChildren } from './lib/child.mjs';
import { controllerRuntimeVersion, ensureGoOperator } from './lib/go-build.mjs';

const ATTACKS = [conversionData, arrayBomb, plainValues, stalledBodies, http2, deepObject, protoKey];
const here = dirname(fileURLToPath(import.meta.url));

const { values: opts } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    impls: { type: 'string' },
    label: { type: 'string' },
    out: { type: 'string' },
    render: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (opts.help) {
  console.log(`node bench/attack.mjs [options]
  --quick              shorter holds, fewer idle connections (~5 min)
  --only LIST          attacks or attack:case, comma-separated: ${ATTACKS.map((a) => a.description.attack).join(', ')}
  --impls LIST         ${IMPLS.join(', ')} (default both)
  --label NAME         added to the result files' names (e.g. before, after)
  --out FILE           result JSON path (default bench/results/<date>-attack[-label].json)
  --render FILE        write FILE's .md again from its .json, run nothing`);
  process.exit(0);
}

const descriptions = ATTACKS.map((a) => a.description);
if (opts.render) {
  const saved = JSON.parse(await readFile(opts.render, 'utf8'));
  await writeFile(opts.render.replace(/\.json$/, '.md'), renderAttackReport(saved, descriptions) + '\n');
  process.exit(0);
}

const impls = opts.impls ? opts.impls.split(',') : IMPLS;
const only = opts.only?.split(',');
const selected = (attackCase) =>
  !only || only.includes(attackCase.attack) || only.includes(`${attackCase.attack}:${attackCase.id}`);
const stamp = new Date()
  .toISOString()
  .replace(/:\d\d\.\d+Z$/, '')
  .replace(':', '');
const outJson =
  opts.out ??
  join(here, 'results', `${stamp}-attack${opts.label ? `-${opts.label}` : ''}${opts.quick ? '-quick' : ''}.json`);
const startedAt = Date.now();
const log = (line) => console.error(`[attack ${((Date.now() - startedAt) / 1000).toFixed(0).padStart(4)} s] ${line}`);

const git = (...args) => spawnSync('git', args, { cwd: here, encoding: 'utf8' }).stdout?.trim();
const doc = {
  startedAt: new Date(startedAt).toISOString(),
  label: opts.label,
  machine: {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memoryGB: os.totalmem() / 2 ** 30,
    // Other work on the machine: the legitimate latencies depend on it.
    loadAverage: os.loadavg(),
    node: process.version,
    controllerRuntime: controllerRuntimeVersion(),
    commit: git('rev-parse', '--short', 'HEAD'),
    // The code under attack: the last commit that changed packages/.
    packagesCommit: `${git('log', '-1', '--format=%h', '--', '../packages')}${git('status', '--porcelain', '--', '../packages') ? '+dirty' : ''}`,
  },
  config: { quick: opts.quick, impls, only: only ?? null, nodeFlags: OPERATOR_NODE_OPTIONS.split(/\s+/) },
  runs: [],
  skipped: [],
};

async function writeResults() {
  await mkdir(dirname(outJson), { recursive: true });
  await writeFile(outJson, JSON.stringify(doc, null, 2) + '\n');
  await writeFile(outJson.replace(/\.json$/, '.md'), renderAttackReport(doc, descriptions) + '\n');
  log(`results: ${outJson} and .md`);
}

let finishing = false;
async function finish(code) {
  if (finishing) return;
  finishing = true;
  killAllChildren();
  await writeResults().catch((error) => console.error(`could not write the results: ${error.message}`));
  process.exit(code);
}
process.on('SIGINT', () => void finish(130));
process.on('SIGTERM', () => void finish(143));
// Every case bounds itself; this only catches a bug.
const hardStop = setTimeout(() => {
  log('hard time limit (25 min) reached: writing partial results and stopping');
  doc.skipped.push('stopped at the hard time limit');
  void finish(1);
}, 25 * 60_000);
hardStop.unref();

const fixtures = await attackFixtures();
try {
  const goBinary = impls.includes('controller-runtime') ? await ensureGoOperator({ onProgress: log }) : undefined;
  for (const attack of ATTACKS) {
    for (const attackCase of attack.cases.filter(selected)) {
      for (const impl of impls) {
        log(`${attackCase.attack}: ${attackCase.title} against ${impl}`);
        try {
          const run = await runCase(impl, attackCase, {
            fixtures,
            goBinary,
            quick: opts.quick,
            log,
            nodeFlags: OPERATOR_NODE_OPTIONS.split(/\s+/),
          });
          doc.runs.push(run);
          const legit = run.legit;
          log(
            `  ${run.summary}\n` +
              `  RSS ${run.idleRssMB.toFixed(0)} -> ${Math.max(run.peakRssMB, run.hwmMB || 0).toFixed(0)} MB` +
              `${run.loopMaxMs === null ? '' : `, loop stall ${run.loopMaxMs.toFixed(0)} ms`}` +
              `, legit ${legit.answered}/${legit.sent} answered, p99 ${legit.p99Ms?.toFixed(0)} ms, longest ${seconds(legit.maxMs)}`,
          );
        } catch (error) {
          log(`  failed: ${error.message}`);
          doc.skipped.push(`${attackCase.attack}:${attackCase.id} ${impl}: ${error.message.split('\n')[0]}`);
        }
      }
    }
  }
} finally {
  await fixtures.cleanup();
}
await finish(0);
