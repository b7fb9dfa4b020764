import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse, stringify } from 'yaml';
import { run } from '../cli.js';
import { realisticCases, type RealisticCase } from '../test-support/realistic-compatibility-cases.js';

let dir: string;
before(async () => (dir = await mkdtemp(join(tmpdir(), 'nestor-crd-diff-'))));
after(() => rm(dir, { recursive: true, force: true }));

async function nestor(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), cwd: dir });
  return { code, stdout, stderr };
}

/** The allowances the report offers to paste: one per breaking change, as the check found them. */
function offered(report: string): Array<{ rule: string; crd: string; version?: string; path: string }> {
  const at = report.indexOf('\nallow:\n');
  if (at < 0) return [];
  const end = report.indexOf('\n\n', at + 1);
  return (parse(report.slice(at + 1, end < 0 ? undefined : end)) as { allow: [] }).allow;
}

async function files(fixture: RealisticCase, name: string) {
  await writeFile(join(dir, `${name}-old.json`), JSON.stringify(fixture.old));
  await writeFile(join(dir, `${name}-new.yaml`), stringify(fixture.new));
  return [`${name}-old.json`, `${name}-new.yaml`] as const;
}

describe('nestor crd diff on CRDs people install', () => {
  const cases = realisticCases();
  cases.forEach((fixture, index) => {
    it(`${fixture.name}: ${fixture.expected.join(', ') || 'compatible'}`, async () => {
      const [old, now] = await files(fixture, `case-${index}`);
      const result = await nestor('crd', 'diff', old, now);
      assert.equal(result.code, fixture.expected.length ? 1 : 0, result.stdout + result.stderr);
      assert.equal(result.stderr, '');
      assert.deepEqual(
        offered(result.stdout)
          .map((f) => [f.rule, f.version, f.path].filter(Boolean).join(' '))
          .sort(),
        [...fixture.expected].sort(),
        result.stdout,
      );
      if (!fixture.expected.length) assert.match(result.stdout, /^no breaking change \(/);
    });
  });

  it('passes once each breaking change is allowed with its reason, and says so', async () => {
    const fixture = cases.find((c) => c.name.startsWith('Gateway v1.0.0'))!;
    const [old, now] = await files(fixture, 'allowed');
    const first = await nestor('crd', 'diff', old, now);
    const allow = offered(first.stdout).map((entry) => ({ ...entry, reason: 'every Gateway we know passes it' }));
    await writeFile(join(dir, 'crd-compat.yaml'), stringify({ allow }));
    const second = await nestor('crd', 'diff', old, now, '--allow', 'crd-compat.yaml');
    assert.equal(second.code, 0, second.stdout);
    assert.match(second.stdout, /^no breaking change \(allowed-old\.json -> allowed-new\.yaml\): 1 CRD\(s\) compared/);
    assert.match(
      second.stdout,
      /allowed by crd-compat\.yaml:\n {2}gateways\.gateway\.networking\.k8s\.io v1 \.spec\.listeners: cel-rule-added: every Gateway we know passes it\n/,
    );
  });

  it('takes the stored versions from the command line', async () => {
    const fixture = cases.find((c) => c.name === 'GRPCRoute v1.1.0 -> v1.2.0, storedVersions unknown')!;
    const [old, now] = await files(fixture, 'stored');
    const stored = await nestor(
      'crd',
      'diff',
      old,
      now,
      '--stored-versions',
      'grpcroutes.gateway.networking.k8s.io=v1',
    );
    assert.deepEqual(
      offered(stored.stdout).map((f) => f.rule),
      ['cel-rule-added'],
    );
    // v1alpha2 was no longer served in v1.1.0: its removal breaks no client, and nothing is stored in it.
    assert.doesNotMatch(stored.stdout, /v1alpha2/);
  });
});

describe('nestor crd diff: what it reads', () => {
  const crd = (plural: string, size: Record<string, unknown>) => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.example.com` },
    spec: {
      group: 'example.com',
      names: { kind: 'Widget', plural },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size } } } },
          },
        },
      ],
    },
  });

  it('reads the CRDs of a nestor manifests folder, and of a YAML stream, and skips the other objects', async () => {
    const release = join(dir, 'release-1');
    await mkdir(join(release, 'crds'), { recursive: true });
    await mkdir(join(release, 'operator'), { recursive: true });
    await writeFile(
      join(release, 'crds', 'crds.yaml'),
      [crd('widgets', { type: 'integer' }), crd('gadgets', { type: 'string' })].map((c) => stringify(c)).join('---\n'),
    );
    await writeFile(join(release, 'crds', 'kustomization.yaml'), 'resources: [crds.yaml]\n');
    await writeFile(
      join(release, 'operator', 'deployment.yaml'),
      stringify({ apiVersion: 'apps/v1', kind: 'Deployment' }),
    );
    await writeFile(join(release, 'README.md'), '# not read\n');
    const stream = [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'widgets' } },
      crd('widgets', { type: 'string' }),
      crd('gadgets', { type: 'string' }),
    ];
    await writeFile(join(dir, 'release-2.yaml'), stream.map((c) => stringify(c)).join('---\n'));
    const result = await nestor('crd', 'diff', 'release-1', 'release-2.yaml');
    assert.equal(result.code, 1);
    assert.match(
      result.stdout,
      /^1 breaking change\(s\) \(release-1 -> release-2\.yaml\), 2 CRD\(s\) compared:\n\nwidgets\.example\.com v1 \.spec\.size\n {2}type-changed: type integer -> string\n/,
    );
  });

  it('refuses a Helm chart, a path that does not exist, files without CRDs, and CRDs in common with none', async () => {
    await mkdir(join(dir, 'chart'), { recursive: true });
    await writeFile(join(dir, 'chart', 'Chart.yaml'), 'name: x\n');
    await writeFile(join(dir, 'widgets.yaml'), stringify(crd('widgets', { type: 'integer' })));
    await writeFile(join(dir, 'gadgets.yaml'), stringify(crd('gadgets', { type: 'integer' })));
    await writeFile(join(dir, 'namespace.yaml'), 'apiVersion: v1\nkind: Namespace\n');
    for (const [args, message] of [
      [
        ['chart', 'widgets.yaml'],
        /^nestor crd diff: chart is a Helm chart, whose templates are YAML only once rendered/,
      ],
      [['widgets.yaml', 'missing.yaml'], /^nestor crd diff: missing\.yaml does not exist\n$/],
      [['missing.yaml', 'absent.yaml'], /^nestor crd diff: missing\.yaml does not exist\n$/],
      [['widgets.yaml', 'namespace.yaml'], /^nestor crd diff: namespace\.yaml holds no CustomResourceDefinition\n$/],
      [
        ['widgets.yaml', 'gadgets.yaml'],
        /^nestor crd diff: no CRD is in both: widgets\.yaml holds widgets\.example\.com, gadgets\.yaml holds gadgets\.example\.com\n$/,
      ],
    ] as const) {
      const result = await nestor('crd', 'diff', ...args);
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, message);
    }
  });

  it('says what is wrong in an allowances file', async () => {
    await writeFile(join(dir, 'widgets.yaml'), stringify(crd('widgets', { type: 'integer' })));
    await writeFile(
      join(dir, 'bad-compat.yaml'),
      stringify({ allow: [{ rule: 'field-gone', path: '.spec.a', reason: 'x' }] }),
    );
    const result = await nestor('crd', 'diff', 'widgets.yaml', 'widgets.yaml', '--allow', 'bad-compat.yaml');
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      /^nestor crd diff: bad-compat\.yaml: allow\[0\]: "field-gone" is no rule of the check: one of /,
    );
  });

  it('prints its usage on a wrong call', async () => {
    for (const args of [[], ['a.yaml'], ['a.yaml', 'b.yaml', '--stored-versions', 'v1'], ['a', 'b', '--bogus']]) {
      const result = await nestor('crd', 'diff', ...args);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, /Usage: nestor crd diff <old> <new>/);
    }
    assert.match((await nestor('crd', 'diff', '--help')).stdout, /^Usage: nestor crd diff <old> <new> \[options\]/);
    const unknown = await nestor('crd', 'lint');
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /the one there is, is "crd diff"/);
  });
});
