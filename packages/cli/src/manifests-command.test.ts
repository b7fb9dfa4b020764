import 'reflect-metadata';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
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
          '--create-namespace',
        ],
        here,
      ),
      {
        module: 'm.js',
        export: 'Root',
        out: 'k8s',
        name: 'op',
        namespace: 'ops',
        createNamespace: true,
        image: 'r/op:1',
      },
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

  it('takes how webhook certificates are made: cert-manager or self-managed', () => {
    const args = parseManifestsArguments(['--module', 'm.js', '--webhook-certificates', 'self-managed'], here);
    assert.equal(args !== 'help' && args.webhookCertificates, 'self-managed');
    assert.throws(
      () => parseManifestsArguments(['--module', 'm.js', '--webhook-certificates', 'openssl'], here),
      /--webhook-certificates openssl: use cert-manager or self-managed/,
    );
  });
});

describe('nestor manifests', () => {
  type Doc = { kind: string; metadata: { name: string; namespace?: string }; spec: Record<string, unknown> };

  /** Runs `nestor manifests --out` into a new folder; returns what it printed and reads what it wrote. */
  async function generate(extra: string[], out?: string) {
    const dir = out ?? (await mkdtemp(join(tmpdir(), 'nestor-manifests-')));
    const result = await capture(manifestsCommand, [
      '--module',
      fixture,
      '--out',
      dir,
      '--name',
      'gadget-op',
      '--namespace',
      'gadgets',
      '--image',
      'example/gadget:2',
      ...extra,
    ]);
    const files = () => readdirRecursive(dir);
    const docs = async (path: string) =>
      parseAllDocuments(await readFile(join(dir, path), 'utf8')).map((d) => d.toJS() as Doc);
    /** What `kubectl apply -k` or `delete -k` on the folder would touch. */
    const kustomization = async (folder: string) => {
      const { resources } = parse(await readFile(join(dir, folder, 'kustomization.yaml'), 'utf8')) as {
        resources: string[];
      };
      return (await Promise.all(resources.map((file) => docs(`${folder}/${file}`)))).flat();
    };
    return { ...result, dir, files, docs, kustomization };
  }

  it('writes the CRDs and the operator as separate kustomizations, from the module, without a cluster', async () => {
    const { code, stderr, dir, files, docs, kustomization } = await generate([]);
    try {
      assert.equal(code, 0, stderr);
      assert.match(stderr, /1 controller\(s\) in AppModule \(GadgetController\): 1 CRD\(s\), 6 RBAC object/);
      assert.deepEqual(await files(), [
        'README.md',
        'crds/crds.yaml',
        'crds/kustomization.yaml',
        'operator/deployment.yaml',
        'operator/kustomization.yaml',
        'operator/rbac.yaml',
      ]);
      assert.match(stderr, /the namespace gadgets must exist: kubectl create namespace gadgets/);
      assert.match(stderr, new RegExp(`kubectl apply -k ${dir}/crds && kubectl apply -k ${dir}/operator`));
      assert.match(stderr, new RegExp(`uninstall the operator: kubectl delete -k ${dir}/operator`));

      const [crd, ...moreCrds] = await kustomization('crds');
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

      assert.deepEqual(
        (await kustomization('operator')).map((o) => `${o.kind}/${o.metadata.name}`),
        [
          'ServiceAccount/gadget-op',
          'ClusterRole/gadget-op',
          'ClusterRoleBinding/gadget-op',
          'Role/gadget-op-leader-election',
          'RoleBinding/gadget-op-leader-election',
          'ClusterRole/gadget-op-metrics-reader',
          'Deployment/gadget-op',
        ],
        'deleting the operator deletes neither the CRDs nor the namespace',
      );
      const [deployment] = await docs('operator/deployment.yaml');
      assert.equal(deployment!.metadata.namespace, 'gadgets');
      assert.match(JSON.stringify(deployment), /"image":"example\/gadget:2"/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('writes the Namespace with --create-namespace, in a kustomization of its own', async () => {
    const { code, stderr, dir, files, kustomization } = await generate(['--create-namespace']);
    try {
      assert.equal(code, 0, stderr);
      assert.match(stderr, /1 CRD\(s\), a Namespace, 6 RBAC object/);
      assert.deepEqual(
        (await files()).filter((path) => path.startsWith('namespace/')),
        ['namespace/kustomization.yaml', 'namespace/namespace.yaml'],
      );
      assert.deepEqual(
        (await kustomization('namespace')).map((o) => `${o.kind}/${o.metadata.name}`),
        ['Namespace/gadgets'],
      );
      assert.match(await readFile(join(dir, 'namespace', 'kustomization.yaml'), 'utf8'), /--create-namespace/);
      assert.ok(!(await kustomization('operator')).some((o) => o.kind === 'Namespace'));
      assert.doesNotMatch(stderr, /must exist/);
      assert.match(
        stderr,
        new RegExp(
          `kubectl apply -k ${dir}/crds && kubectl apply -k ${dir}/namespace && kubectl apply -k ${dir}/operator`,
        ),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('removes what an earlier run generated there and this one does not, and nothing else', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nestor-manifests-'));
    try {
      assert.equal((await generate(['--create-namespace'], dir)).code, 0);
      // The layout before the CRDs and the operator had folders of their own.
      const generated =
        "# Generated by `nestor manifests` from the operator's decorators. Do not edit: generate again.\n";
      for (const file of ['kustomization.yaml', 'crds.yaml', 'rbac.yaml', 'deployment.yaml']) {
        await writeFile(join(dir, file), `${generated}kind: Old\n`);
      }
      await mkdir(join(dir, 'user'));
      await writeFile(join(dir, 'user', 'kustomization.yaml'), `${generated}resources: []\n`);
      await writeFile(join(dir, 'operator', 'mine.yaml'), 'kind: Mine\n');
      await writeFile(join(dir, 'mine.yaml'), `${generated}kind: Stream\n`);

      const { code, stderr, files } = await generate([], dir);
      assert.equal(code, 0, stderr);
      assert.match(
        stderr,
        /removed what an earlier nestor manifests wrote there: kustomization\.yaml, crds\.yaml, rbac\.yaml, deployment\.yaml, namespace\/kustomization\.yaml, namespace\/namespace\.yaml/,
      );
      assert.deepEqual(await files(), [
        'README.md',
        'crds/crds.yaml',
        'crds/kustomization.yaml',
        'mine.yaml',
        'operator/deployment.yaml',
        'operator/kustomization.yaml',
        'operator/mine.yaml',
        'operator/rbac.yaml',
        'user/kustomization.yaml',
      ]);
      assert.equal(await readFile(join(dir, 'operator', 'mine.yaml'), 'utf8'), 'kind: Mine\n');
      assert.match(await readFile(join(dir, 'mine.yaml'), 'utf8'), /kind: Stream/);
      assert.match(await readFile(join(dir, 'user', 'kustomization.yaml'), 'utf8'), /resources/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('prints one YAML stream without --out, for kubectl apply -f -, with the Namespace only if asked', async () => {
    const kindsOf = async (extra: string[]) => {
      const { code, stdout } = await capture(manifestsCommand, ['--module', fixture, '--name', 'gadget-op', ...extra]);
      assert.equal(code, 0);
      return parseAllDocuments(stdout).map((d) => (d.toJS() as { kind: string }).kind);
    };
    const operator = [
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'Role',
      'RoleBinding',
      'ClusterRole',
      'Deployment',
    ];
    assert.deepEqual(await kindsOf([]), ['CustomResourceDefinition', ...operator]);
    assert.deepEqual(await kindsOf(['--create-namespace']), ['CustomResourceDefinition', 'Namespace', ...operator]);
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
    assert.match(help.stdout, /--create-namespace/);
    assert.match(
      help.stdout,
      /kubectl apply -k <dir>\/crds[^\n]*\n[^\n]*<dir>\/namespace[^\n]*\n[^\n]*<dir>\/operator/,
    );
    assert.match(help.stdout, /kubectl delete -k <dir>\/operator deletes\nthe operator alone/);
  });
});

/** The files under a folder, as sorted relative paths. */
async function readdirRecursive(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}
