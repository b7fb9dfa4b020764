#!/usr/bin/env node
// Nestor's CRD compatibility check against crdify (sigs.k8s.io/crdify, built from the Go
// module bench/crdify pins) on the same pairs of CRDs: the small ones of the operator's unit
// tests (packages/operator/src/test-support/crd-compatibility-cases.ts) and those on CRDs
// people install (packages/cli/src/test-support/realistic-compatibility-cases.ts). Prints one
// row a pair, each tool's findings and whether their verdicts agree; docs/upgrades.md
// explains every row where they do not. crdify runs with its defaults (every validation an
// error, unhandled changes an error); its description findings are counted apart, since a
// description changes no object. Not part of npm test: it needs Go, once.
//   npm run build && node bench/crd-compat.mjs [--out FILE.md] [--filter TEXT]
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { checkCrdCompatibility, readComparedCrd } from '@nestor/operator/manifests';
import { COMPATIBILITY_CASES } from '../packages/operator/dist/test-support/crd-compatibility-cases.js';
import { realisticCases } from '../packages/cli/dist/test-support/realistic-compatibility-cases.js';
import { crdifyVersion, ensureCrdify } from './lib/crdify-build.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({ options: { out: { type: 'string' }, filter: { type: 'string' } } });
const log = (line) => process.stderr.write(`${line}\n`);

/** crdify's validations, as the rule of nestor's check that covers the same change. */
const RULE_OF = {
  scope: 'scope-changed',
  storedVersionRemoval: 'stored-version-removed',
  existingFieldRemoval: 'field-removed',
  type: 'type-changed',
  required: 'required-added',
  enum: 'enum-narrowed',
  maximum: 'limit-tightened',
  minimum: 'limit-tightened',
  maxLength: 'limit-tightened',
  minLength: 'limit-tightened',
  maxItems: 'limit-tightened',
  minItems: 'limit-tightened',
  maxProperties: 'limit-tightened',
  minProperties: 'limit-tightened',
  pattern: 'pattern-tightened',
  default: 'default-changed',
  nullable: 'nullable-removed',
};

/** The JSONSchemaProps fields an `unhandled` finding of crdify names in its diff, as nestor's rule on them. */
const UNHANDLED_RULE_OF = {
  XValidations: 'cel-rule-added',
  XListType: 'list-type-changed',
  XListMapKeys: 'list-type-changed',
  XMapType: 'list-type-changed',
  ExclusiveMaximum: 'limit-tightened',
  ExclusiveMinimum: 'limit-tightened',
  MultipleOf: 'limit-tightened',
  UniqueItems: 'limit-tightened',
  Format: 'pattern-tightened',
  XIntOrString: 'type-changed',
  XEmbeddedResource: 'type-changed',
  XPreserveUnknownFields: 'unknown-fields-pruned',
};

const crdify = await ensureCrdify({ onProgress: log });
const cases = [
  ...COMPATIBILITY_CASES.map((c) => ({ ...c, group: 'small', source: 'widgets.example.com' })),
  ...realisticCases().map((c) => ({ ...c, group: 'realistic' })),
].filter((c) => !values.filter || c.name.includes(values.filter));
const dir = await mkdtemp(join(os.tmpdir(), 'nestor-crd-compat-'));
const rows = [];
try {
  for (const [index, fixture] of cases.entries()) {
    const old = join(dir, `${index}-old.json`);
    const now = join(dir, `${index}-new.json`);
    await writeFile(old, JSON.stringify(fixture.old));
    await writeFile(now, JSON.stringify(fixture.new));
    rows.push({ ...fixture, nestor: runNestor(fixture, old, now), crdify: runCrdify(old, now) });
    log(`${index + 1}/${cases.length} ${fixture.name}`);
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}

function runNestor(fixture, old, now) {
  const previous = readComparedCrd(fixture.old, 'old');
  const next = readComparedCrd(fixture.new, 'new');
  // The best of five: one check is a few milliseconds, which a busy machine's scheduler blurs.
  let report;
  let checkMs = Infinity;
  for (let run = 0; run < 5; run++) {
    const started = performance.now();
    report = checkCrdCompatibility([previous], [next]);
    checkMs = Math.min(checkMs, performance.now() - started);
  }
  // The command as a user runs it, files read and parsed, for a wall time beside crdify's.
  const cliStarted = performance.now();
  const cli = spawnSync(
    process.execPath,
    [join(here, '..', 'packages', 'cli', 'dist', 'main.js'), 'crd', 'diff', old, now],
    {
      encoding: 'utf8',
    },
  );
  const wallMs = performance.now() - cliStarted;
  if (cli.status !== (report.breaking.length ? 1 : 0))
    throw new Error(`nestor crd diff: exit ${cli.status}\n${cli.stderr}`);
  return {
    findings: report.breaking.map((f) => ({ rule: f.rule, version: f.version, path: f.path })),
    checkMs,
    wallMs,
  };
}

function runCrdify(old, now) {
  const started = performance.now();
  const result = spawnSync(crdify, [`file://${old}`, `file://${now}`, '-o', 'json'], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  const wallMs = performance.now() - started;
  if (result.status !== 0 && result.status !== 1) throw new Error(`crdify: exit ${result.status}\n${result.stderr}`);
  const output = JSON.parse(result.stdout || '{}');
  const findings = [];
  for (const check of output.crdValidation ?? []) {
    for (const error of check.errors ?? []) findings.push({ name: check.name, ...crdLevelPlace(check.name, error) });
  }
  for (const [section, list] of [
    ['same', output.sameVersionValidation],
    ['served', output.servedVersionValidation],
  ]) {
    for (const version of list ?? []) {
      for (const property of version.propertyComparisons ?? []) {
        for (const check of property.comparisonResults ?? []) {
          for (const error of check.errors ?? []) {
            findings.push({
              name: check.name,
              ...(check.name === 'unhandled' ? { fields: changedFields(error) } : {}),
              version: version.version,
              path: ourPath(property.property),
              section,
            });
          }
        }
      }
    }
  }
  return { exit: result.status, findings, wallMs };
}

/**
 * The fields of the schema node an `unhandled changes found` diff shows changed: go-cmp
 * writes the node's own fields one tab in, so a line marked - or + counts for the field it
 * is, or for the one whose value it is part of.
 */
function changedFields(diff) {
  const fields = new Set();
  let current;
  // go-cmp writes spaces or, at random, no-break spaces around its marks, so that nobody parses it.
  for (const line of diff.replace(/\u00a0/g, ' ').split('\n')) {
    const own = /^[-+ ] \t(\w+):/.exec(line)?.[1];
    if (own) current = own;
    if (/^[-+]/.test(line) && current) fields.add(current);
  }
  return [...fields];
}

/** Where a whole-CRD finding of crdify points: `removed field : v1.^.spec.mode`. */
function crdLevelPlace(name, error) {
  if (name !== 'existingFieldRemoval') return {};
  const [, version, path] = /: (\S+?)\.(\^\S*)$/.exec(error) ?? [];
  return { version, path: ourPath(path ?? '') };
}

/** crdify's `^.spec.ports.items.name` written as nestor's `.spec.ports[*].name`. */
function ourPath(path) {
  const written = path
    .replace(/^\^/, '')
    .replace(/\.items(?=\.|$)/g, '[*]')
    .replace(/\.additionalProperties(?=\.|$)/g, '.*');
  return written === '' ? '.' : written;
}

/**
 * crdify's findings as nestor's rules. A removed field is an existingFieldRemoval and also a
 * property diffed against an empty one (its type and every other keyword "changed"): those
 * echoes at or under a removed path count as the removal.
 */
function crdifyRules(row) {
  const findings = row.crdify.findings.filter((f) => f.name !== 'description');
  const removed = findings.filter((f) => f.name === 'existingFieldRemoval').map((f) => `${f.version} ${f.path}`);
  const echo = (f) =>
    f.name !== 'existingFieldRemoval' &&
    f.section === 'same' &&
    removed.some(
      (r) =>
        `${f.version} ${f.path}` === r ||
        `${f.version} ${f.path}`.startsWith(`${r}.`) ||
        `${f.version} ${f.path}`.startsWith(`${r}[`),
    );
  return new Set(
    findings
      .filter((f) => !echo(f))
      .flatMap((f) =>
        f.name === 'unhandled' && f.fields.length
          ? f.fields.map((x) => UNHANDLED_RULE_OF[x] ?? `unhandled ${x}`)
          : [RULE_OF[f.name] ?? f.name],
      ),
  );
}

function verdict(row) {
  const ours = new Set(row.nestor.findings.map((f) => f.rule));
  const theirs = crdifyRules(row);
  const oursBreaks = ours.size > 0;
  const theirsBreaks = theirs.size > 0;
  if (oursBreaks !== theirsBreaks) return 'differ';
  const same = ours.size === theirs.size && [...ours].every((rule) => theirs.has(rule));
  return same ? 'agree' : 'both break, other rules';
}

function shownNestor(row) {
  if (!row.nestor.findings.length) return 'compatible';
  return row.nestor.findings.map((f) => [f.rule, f.version, f.path].filter(Boolean).join(' ')).join('<br>');
}

function shownCrdify(row) {
  const counted = new Map();
  let descriptions = 0;
  for (const f of row.crdify.findings) {
    if (f.name === 'description') {
      descriptions++;
      continue;
    }
    const name = f.fields ? `${f.name}(${f.fields.join(', ')})` : f.name;
    const key = [name, f.section === 'served' ? `(${f.version})` : f.version, f.path].filter(Boolean).join(' ');
    counted.set(key, (counted.get(key) ?? 0) + 1);
  }
  const lines = [...counted].map(([key, n]) => (n > 1 ? `${key} ×${n}` : key));
  if (descriptions) lines.push(`description ×${descriptions}`);
  return lines.length ? lines.join('<br>') : 'compatible';
}

const table = [
  '| # | pair | nestor crd diff | crdify ' + crdifyVersion() + ' | verdicts |',
  '|---|---|---|---|---|',
  ...rows.map(
    (row, i) =>
      `| ${i + 1} | ${row.name} (${row.source}) | ${shownNestor(row)} | ${shownCrdify(row)} | ${verdict(row)} |`,
  ),
];
const counts = rows.reduce((n, row) => ((n[verdict(row)] = (n[verdict(row)] ?? 0) + 1), n), {});
const realistic = rows.filter((row) => row.group === 'realistic');
const sum = (list, pick) => list.reduce((total, row) => total + pick(row), 0);
const timing = [
  `nestor's check in process (best of 5 each): ${sum(rows, (r) => r.nestor.checkMs).toFixed(1)} ms for the ${rows.length} pairs ` +
    `(largest: ${Math.max(...rows.map((r) => r.nestor.checkMs)).toFixed(1)} ms, ${rows.reduce((a, r) => (r.nestor.checkMs > a.nestor.checkMs ? r : a)).name})`,
  `wall time per pair, the command as users run it (process start, JSON read, check, report), median of the ${realistic.length} realistic pairs: ` +
    `nestor crd diff ${median(realistic.map((r) => r.nestor.wallMs)).toFixed(0)} ms, crdify ${median(realistic.map((r) => r.crdify.wallMs)).toFixed(0)} ms; ` +
    `of the ${rows.length - realistic.length} small ones: nestor ${median(rows.filter((r) => r.group === 'small').map((r) => r.nestor.wallMs)).toFixed(0)} ms, ` +
    `crdify ${median(rows.filter((r) => r.group === 'small').map((r) => r.crdify.wallMs)).toFixed(0)} ms`,
];
const summary = `${rows.length} pairs: ${Object.entries(counts)
  .map(([name, n]) => `${n} ${name}`)
  .join(', ')}`;
const report = [
  `# nestor crd diff and crdify ${crdifyVersion()} on the same CRD pairs (${new Date().toISOString().slice(0, 10)})`,
  '',
  `${os.cpus().length} CPU(s), ${os.cpus()[0]?.model ?? 'unknown CPU'}, load average ${os
    .loadavg()
    .map((n) => n.toFixed(1))
    .join(' ')} at the end, Node ${process.version}. ${summary}.`,
  'crdify with its defaults; its description findings counted apart ("verdicts" leaves them out).',
  'docs/upgrades.md, "Compatibility check", explains each row whose verdicts are not "agree".',
  '',
  ...table,
  '',
  ...timing.map((line) => `- ${line}`),
  '',
].join('\n');
process.stdout.write(report);
const out =
  values.out ?? join(here, 'results', `crd-compat-${new Date().toISOString().slice(0, 16).replace(':', '')}.md`);
await writeFile(out, report);
log(`results: ${out}`);

function median(list) {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor(sorted.length / 2)] : NaN;
}
