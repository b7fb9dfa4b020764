import 'reflect-metadata';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, stringify } from 'yaml';
import { run } from '../cli.js';
import { UsageError } from '../command-io.js';
import { parseManifestsArguments } from '../manifests-arguments.js';

const fixture = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'app.module.js');

let dir: string;
before(async () => (dir = await mkdtemp(join(tmpdir(), 'nestor-manifests-check-'))));
after(() => rm(dir, { recursive: true, force: true }));

async function nestor(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), cwd: dir });
  return { code, stdout, stderr };
}

/** The previous release's folder with its Gadget CRD changed: the generated one then differs from it. */
async function previousRelease(name: string, change: (spec: Record<string, Record<string, unknown>>) => void) {
  const written = await nestor('manifests', '--module', fixture, '--out', name);
  assert.equal(written.code, 0, written.stderr);
  const file = join(dir, name, 'crds', 'crds.yaml');
  const documents = parseAllDocuments(await readFile(file, 'utf8')).map((d) => d.toJS() as Record<string, never>);
  const crd = documents.find((d) => d.kind === 'CustomResourceDefinition') as unknown as {
    spec: {
      versions: Array<{ name: string; schema: { openAPIV3Schema: { properties: { spec: { properties: never } } } } }>;
    };
  };
  change(crd.spec.versions.find((v) => v.name === 'v1')!.schema.openAPIV3Schema.properties.spec.properties);
  await writeFile(file, documents.map((d) => stringify(d)).join('---\n'));
}

describe('nestor manifests --check', () => {
  it('writes the manifests when the CRDs keep every stored object valid', async () => {
    await previousRelease('release-1', () => {});
    const result = await nestor('manifests', '--module', fixture, '--check', 'release-1', '--out', 'release-2');
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stderr,
      /^no breaking change \(release-1 -> the generated CRDs\): 1 CRD\(s\) compared, gadgets\.clitest\.nestor\.dev\n/,
    );
    assert.ok(existsSync(join(dir, 'release-2', 'crds', 'crds.yaml')));
  });

  it('writes nothing when a change breaks them, and says what to do', async () => {
    // The previous release had a field the source no longer declares, and a looser limit.
    await previousRelease('release-1b', (spec) => {
      spec.legacy = { type: 'string' };
      spec.message!.maxLength = 1000;
    });
    const result = await nestor('manifests', '--module', fixture, '--check', 'release-1b', '--out', 'release-2b');
    assert.equal(result.code, 1, result.stderr);
    assert.match(
      result.stderr,
      /^2 breaking change\(s\) \(release-1b -> the generated CRDs\), 1 CRD\(s\) compared:\n\ngadgets\.clitest\.nestor\.dev v1 \.spec\.message\n {2}limit-tightened: maxLength 1000 -> 253\n {2}what to do: .*\n\ngadgets\.clitest\.nestor\.dev v1 \.spec\.legacy\n {2}field-removed: field removed\n/,
    );
    assert.match(result.stderr, /nestor manifests: nothing written: change the source, or allow each change above\n$/);
    assert.equal(existsSync(join(dir, 'release-2b')), false);
    // The same with --helm: no chart either.
    const chart = await nestor('manifests', '--module', fixture, '--check', 'release-1b', '--helm', 'chart-2b');
    assert.equal(chart.code, 1);
    assert.equal(existsSync(join(dir, 'chart-2b')), false);
  });

  it('writes them when each breaking change is allowed, and lists what was allowed', async () => {
    await previousRelease('release-1c', (spec) => {
      spec.legacy = { type: 'string' };
    });
    await writeFile(
      join(dir, 'crd-compat.yaml'),
      stringify({
        allow: [
          {
            rule: 'field-removed',
            path: '.spec.legacy',
            crd: 'gadgets.clitest.nestor.dev',
            reason: 'no release ever read it',
          },
        ],
      }),
    );
    const result = await nestor(
      'manifests',
      '--module',
      fixture,
      '--check',
      'release-1c',
      '--allow',
      'crd-compat.yaml',
      '--out',
      'release-2c',
    );
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stderr,
      /allowed by crd-compat\.yaml:\n {2}gadgets\.clitest\.nestor\.dev v1 \.spec\.legacy: field-removed: no release ever read it\n/,
    );
    assert.ok(existsSync(join(dir, 'release-2c', 'crds', 'crds.yaml')));
  });

  it('reads the allowances beside the package.json near the module, and refuses --allow without --check', async () => {
    const project = join(dir, 'project');
    await mkdir(join(project, 'dist'), { recursive: true });
    await writeFile(join(project, 'package.json'), '{"name":"@acme/widgets-operator"}');
    const module = join(project, 'dist', 'app.module.js');
    const without = parseManifestsArguments(['--module', module, '--check', 'old'], dir);
    assert.deepEqual(without === 'help' ? undefined : without.check, { previous: ['old'] });
    await writeFile(join(project, 'crd-compat.yaml'), 'allow: []\n');
    const found = parseManifestsArguments(
      ['--module', module, '--check', 'old', '--stored-versions', 'widgets.acme.io=v1beta1,v1'],
      dir,
    );
    assert.deepEqual(found === 'help' ? undefined : found.check, {
      previous: ['old'],
      allow: join(project, 'crd-compat.yaml'),
      storedVersions: { 'widgets.acme.io': ['v1beta1', 'v1'] },
    });
    assert.throws(
      () => parseManifestsArguments(['--module', module, '--allow', 'x.yaml'], dir),
      (e: unknown) => e instanceof UsageError && /--allow goes with --check/.test(e.message),
    );
    assert.throws(
      () =>
        parseManifestsArguments(['--module', module, '--check', 'old', '--stored-versions', 'widgets.acme.io'], dir),
      /--stored-versions widgets\.acme\.io: write <crd>=<versions>/,
    );
  });

  it('says which previous file it cannot read', async () => {
    await writeFile(
      join(dir, 'broken.yaml'),
      'kind: CustomResourceDefinition\napiVersion: apiextensions.k8s.io/v1beta1\nmetadata: {name: a.b}\n',
    );
    const result = await nestor('manifests', '--module', fixture, '--check', 'broken.yaml');
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      /^nestor manifests --check: broken\.yaml: the CustomResourceDefinition a\.b is apiextensions\.k8s\.io\/v1beta1; only apiextensions\.k8s\.io\/v1 is compared/,
    );
  });
});
