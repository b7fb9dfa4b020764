import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import { GENERATED_NOTICE } from '@nestor/operator/manifests';
import { makeFolders } from './make-folders.js';
import { ManifestWriteError, writeManifestFiles } from './manifest-output.js';

const generated = (text: string) => `# ${GENERATED_NOTICE}\n${text}`;
const FILES = {
  'crds/crds.yaml': generated('kind: CustomResourceDefinition\n'),
  'crds/kustomization.yaml': generated('resources: [crds.yaml]\n'),
  'operator/rbac.yaml': generated('kind: ClusterRole\n'),
  'operator/deployment.yaml': generated('kind: Deployment\n'),
  'operator/kustomization.yaml': generated('resources: [rbac.yaml, deployment.yaml]\n'),
  'README.md': '# Deploying the operator\n',
};
/** What an earlier run wrote: other content in the same files, and one file this run does not write. */
const EARLIER: Record<string, string> = {
  ...Object.fromEntries(Object.entries(FILES).map(([path, text]) => [path, `${text}# earlier\n`])),
  'operator/metrics.yaml': generated('kind: Service\n'),
};

const root = await mkdtemp(join(tmpdir(), 'nestor-output-'));
after(() => rm(root, { recursive: true, force: true }));
let count = 0;
const folder = () => join(root, `out-${count++}`);

/** Every file and folder under `dir`, with the files' content. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const tree: Record<string, string> = {};
  for (const entry of entries) {
    const path = join(entry.parentPath, entry.name);
    tree[relative(dir, path)] = entry.isDirectory()
      ? '<folder>'
      : entry.isSymbolicLink()
        ? '<link>'
        : await readFile(path, 'utf8');
  }
  return tree;
}

async function written(dir: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), text);
  }
}

describe('writeManifestFiles', () => {
  it('writes every file into a new folder, and its missing parents, leaving nothing else beside it', async () => {
    const parent = folder();
    const out = join(parent, 'deep', 'deploy');
    assert.deepEqual(await writeManifestFiles(out, FILES), []);
    assert.deepEqual(await snapshot(parent), {
      deep: '<folder>',
      'deep/deploy': '<folder>',
      ...Object.fromEntries(
        Object.entries({ crds: '<folder>', operator: '<folder>', ...FILES }).map(([p, t]) => [`deep/deploy/${p}`, t]),
      ),
    });
  });

  it('replaces what an earlier run wrote, removes what it no longer writes, and keeps what a person wrote', async () => {
    const out = folder();
    await written(out, { ...EARLIER, 'operator/mine.yaml': 'kind: Mine\n', 'notes.md': 'mine\n' });
    assert.deepEqual(await writeManifestFiles(out, FILES), ['operator/metrics.yaml']);
    assert.deepEqual(await snapshot(out), {
      crds: '<folder>',
      operator: '<folder>',
      ...FILES,
      'operator/mine.yaml': 'kind: Mine\n',
      'notes.md': 'mine\n',
    });
  });

  it('changes nothing when a file cannot be put in place, and says which and why', async () => {
    // A folder where the operator's folder must be, a folder where a file must be: the
    // CRDs come first, so they were already in place when the operator's files failed.
    for (const [obstacle, message] of [
      ['operator', /cannot write \S+\/operator\/rbac\.yaml: \S+\/operator is a file, where a folder must be/],
      ['operator/deployment.yaml', /cannot write \S+\/operator\/deployment\.yaml: it is a folder, not a file/],
    ] as const) {
      const out = folder();
      await written(out, { 'crds/crds.yaml': EARLIER['crds/crds.yaml']!, 'README.md': EARLIER['README.md']! });
      if (obstacle === 'operator') await writeFile(join(out, 'operator'), 'a file\n');
      else await mkdir(join(out, obstacle), { recursive: true });
      const before = await snapshot(out);
      await assert.rejects(
        writeManifestFiles(out, FILES),
        (error: unknown) =>
          error instanceof ManifestWriteError &&
          message.test(error.message) &&
          error.message.endsWith(`nothing in ${out} was changed`),
      );
      assert.deepEqual(await snapshot(out), before, `with ${obstacle} in the way`);
    }
  });

  it('refuses an output path that is a file, or lies under one, and creates nothing', async () => {
    const parent = folder();
    await mkdir(parent);
    await writeFile(join(parent, 'file'), 'x');
    await assert.rejects(
      writeManifestFiles(join(parent, 'file'), FILES),
      /cannot write \S+\/file: it is a file, not a folder; nothing was written$/,
    );
    await assert.rejects(
      writeManifestFiles(join(parent, 'file', 'deploy', 'more'), FILES),
      /cannot write \S+\/file\/deploy\/more: \S+\/file is a file, where a folder must be; nothing was written$/,
    );
    assert.deepEqual(await snapshot(parent), { file: 'x' });
  });

  it('refuses an output folder under /proc or /sys at once, where a recursive mkdir never returns', async () => {
    for (const out of ['/proc/nestor-deploy/k8s', '/proc/self/nestor-deploy', '/sys/nestor-deploy']) {
      await assert.rejects(
        writeManifestFiles(out, FILES),
        new RegExp(
          `cannot write ${out}: it is under /(proc|sys), a kernel file system where no folder or file can be made; nothing was written$`,
        ),
      );
    }
    // The folders themselves, made one level at a time: no progress is an error, not a loop.
    await assert.rejects(makeFolders('/proc/nestor-deploy/k8s'), /no folder can be made in \/proc \(mkdir says ENOENT/);
  });

  it('writes nothing through a symbolic link inside the output folder, and names it', async () => {
    const out = folder();
    const elsewhere = folder();
    await written(out, {
      'README.md': EARLIER['README.md']!,
      'operator/deployment.yaml': EARLIER['operator/deployment.yaml']!,
    });
    await written(elsewhere, { 'precious.yaml': generated('kind: Precious\n') });
    await symlink(elsewhere, join(out, 'crds'));
    const before = { out: await snapshot(out), elsewhere: await snapshot(elsewhere) };
    await assert.rejects(
      writeManifestFiles(out, FILES),
      (error: unknown) =>
        error instanceof ManifestWriteError &&
        error.path === join(out, 'crds') &&
        error.message.includes(`it is a symbolic link (to ${elsewhere}), and nothing is written through a link`) &&
        error.message.endsWith(`nothing in ${out} was changed`),
    );
    assert.deepEqual(await snapshot(elsewhere), before.elsewhere, 'nothing written or removed where it points');
    assert.deepEqual(await snapshot(out), before.out);
  });
});
