import 'reflect-metadata';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';
import { run } from './cli.js';
import { manifestsCommand, parseManifestsArguments, UsageError, type CommandIo } from './manifests-command.js';

const here = dirname(fileURLToPath(import.meta.url));
const fixture = join(here, 'fixtures', 'app.module.js');

/** Runs a command line in-process, capturing its output. */
async function capture(command: (argv: string[], io: CommandIo) => Promise<number>, argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await command(argv, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    cwd: here,
  });
  return { code, stdout, stderr };
}

describe('parseManifestsArguments', () => {
  it('derives the name from the package.json near the module, and the namespace and image from the name', () => {
    assert.deepEqual(parseManifestsArguments(['--module', fixture], here), {
      module: fixture,
      name: 'cli',
      namespace: 'cli-system',
      image: 'cli:latest',
    });
    assert.deepEqual(
      parseManifestsArguments(
        [
          '--module',
          'm.js',
          '--export',
          'Root',
          '--out',
          'k8s',
          '--name',
          'op',
          '--namespace',
          'ops',
          '--image',
          'r/op:1',
        ],
        here,
      ),
      { module: 'm.js', export: 'Root', out: 'k8s', name: 'op', namespace: 'ops', image: 'r/op:1' },
    );
    assert.equal(parseManifestsArguments(['--help'], here), 'help');
  });

  it('refuses a missing module, unknown options and names Kubernetes would refuse', () => {
    assert.throws(
      () => parseManifestsArguments([], here),
      (e: unknown) => e instanceof UsageError && /--module is required/.test(e.message),
    );
    assert.throws(() => parseManifestsArguments(['--module', 'm.js', '--bogus'], here), UsageError);
    assert.throws(
      () => parseManifestsArguments(['--module', 'm.js', '--name', 'My_Operator'], here),
      /--name "My_Operator" is not a valid Kubernetes name/,
    );
    assert.throws(
      () => parseManifestsArguments(['--module', 'm.js', '--name', 'op', '--namespace', 'x'.repeat(64)], here),
      /--namespace/,
    );
  });
});

describe('nestor manifests', () => {
  it('writes crds.yaml, rbac.yaml, deployment.yaml and kustomization.yaml from the module, without a cluster', async () => {
    const out = await mkdtemp(join(tmpdir(), 'nestor-manifests-'));
    try {
      const { code, stderr } = await capture(manifestsCommand, [
        '--module',
        fixture,
        '--out',
        out,
        '--name',
        'gadget-op',
        '--namespace',
        'gadgets',
        '--image',
        'example/gadget:2',
      ]);
      assert.equal(code, 0, stderr);
      assert.match(stderr, /1 controller\(s\) in AppModule \(GadgetController\): 1 CRD\(s\)/);
      assert.match(stderr, /kubectl apply -k/);
      assert.deepEqual((await readdir(out)).sort(), [
        'crds.yaml',
        'deployment.yaml',
        'kustomization.yaml',
        'rbac.yaml',
      ]);
      type Doc = { kind: string; metadata: { name: string; namespace?: string }; spec: Record<string, unknown> };
      const docs = async (file: string) =>
        parseAllDocuments(await readFile(join(out, file), 'utf8')).map((d) => d.toJS() as Doc);

      const [crd, ...moreCrds] = await docs('crds.yaml');
      assert.equal(moreCrds.length, 0);
      assert.equal(crd!.metadata.name, 'gadgets.clitest.nestor.dev');
      assert.deepEqual(
        (crd!.spec.versions as Array<{ name: string; storage: boolean }>).map((v) => [v.name, v.storage]),
        [
          ['v1', true],
          ['v1alpha1', false],
        ],
        'the version no controller names is in the CRD too',
      );

      const rbac = await docs('rbac.yaml');
      assert.deepEqual(
        rbac.map((o) => `${o.kind}/${o.metadata.name}`),
        [
          'Namespace/gadgets',
          'ServiceAccount/gadget-op',
          'ClusterRole/gadget-op',
          'ClusterRoleBinding/gadget-op',
          'Role/gadget-op-leader-election',
          'RoleBinding/gadget-op-leader-election',
          'ClusterRole/gadget-op-metrics-reader',
        ],
      );
      const [deployment] = await docs('deployment.yaml');
      assert.equal(deployment!.metadata.namespace, 'gadgets');
      assert.match(JSON.stringify(deployment), /"image":"example\/gadget:2"/);
      assert.deepEqual(parse(await readFile(join(out, 'kustomization.yaml'), 'utf8')).resources, [
        'crds.yaml',
        'rbac.yaml',
        'deployment.yaml',
      ]);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });

  it('prints one YAML stream without --out, for kubectl apply -f -', async () => {
    const { code, stdout } = await capture(manifestsCommand, ['--module', fixture, '--name', 'gadget-op']);
    assert.equal(code, 0);
    const kinds = parseAllDocuments(stdout).map((d) => (d.toJS() as { kind: string }).kind);
    assert.deepEqual(kinds, [
      'CustomResourceDefinition',
      'Namespace',
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'Role',
      'RoleBinding',
      'ClusterRole',
      'Deployment',
    ]);
  });

  it('explains a wrong module path, export or file type, with the usage and exit code 2', async () => {
    const missing = await capture(manifestsCommand, ['--module', 'nowhere.js']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--module nowhere\.js: no such file/);
    assert.match(missing.stderr, /Usage: nestor manifests/);
    const noExport = await capture(manifestsCommand, ['--module', fixture, '--export', 'Nope']);
    assert.equal(noExport.code, 2);
    assert.match(noExport.stderr, /has no export named Nope; it exports: .*AppModule/);
    const ts = await capture(manifestsCommand, ['--module', join(here, '..', 'src', 'fixtures', 'app.module.ts')]);
    assert.match(ts.stderr, /is TypeScript: build the application/);
    const notModule = await capture(manifestsCommand, [
      '--module',
      join(here, 'fixtures', 'gadget.js'),
      '--export',
      'GadgetController',
    ]);
    assert.match(notModule.stderr, /the export GadgetController .* is not a Nest module/);
  });

  it('fails when the module has no controllers', async () => {
    const { code, stderr } = await capture(manifestsCommand, ['--module', fixture, '--export', 'GadgetModule']);
    // GadgetModule's controllers come from its register() dynamic module, not its class.
    assert.equal(code, 1);
    assert.match(stderr, /no @Controller classes in GadgetModule/);
  });
});

describe('nestor', () => {
  it('dispatches commands and explains unknown ones', async () => {
    assert.equal((await capture(run, ['--help'])).code, 0);
    const unknown = await capture(run, ['deploy']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command "deploy"/);
    const help = await capture(run, ['manifests', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--module <path>/);
  });
});
