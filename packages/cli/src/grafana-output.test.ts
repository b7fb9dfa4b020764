import 'reflect-metadata';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { UsageError, type CommandIo } from './command-io.js';
import { parseManifestsArguments } from './manifests-arguments.js';
import { manifestsCommand } from './manifests-command.js';

const here = dirname(fileURLToPath(import.meta.url));
const fixture = join(here, 'fixtures', 'app.module.js');
const work = await mkdtemp(join(tmpdir(), 'nestor-grafana-cli-'));
after(() => rm(work, { recursive: true, force: true }));

async function manifests(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const io: CommandIo = { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), cwd: work };
  const code = await manifestsCommand(['--module', fixture, '--name', 'widgets', ...argv], io);
  return { code, stdout, stderr };
}

describe('nestor manifests --grafana', () => {
  it('writes the dashboards to their folder beside the manifests, and the sidecar ConfigMap when asked', async () => {
    const { code, stderr } = await manifests(['--out', 'deploy', '--grafana', 'deploy/grafana', '--grafana-configmap']);
    assert.equal(code, 0, stderr);
    assert.deepEqual((await readdir(join(work, 'deploy', 'grafana'))).sort(), [
      'configmap.yaml',
      'kustomization.yaml',
      'widgets-controllers.json',
      'widgets-runtime.json',
    ]);
    const dashboard = JSON.parse(await readFile(join(work, 'deploy/grafana/widgets-runtime.json'), 'utf8')) as {
      uid: string;
    };
    assert.equal(dashboard.uid, 'widgets-runtime');
    const configMap = parse(await readFile(join(work, 'deploy/grafana/configmap.yaml'), 'utf8')) as {
      metadata: { namespace: string; labels: Record<string, string> };
      data: Record<string, string>;
    };
    assert.equal(configMap.metadata.namespace, 'widgets-system');
    assert.equal(configMap.metadata.labels['grafana_dashboard'], '1');
    assert.deepEqual(JSON.parse(configMap.data['widgets-runtime.json']!), dashboard);
    assert.match(stderr, /wrote .*widgets-controllers\.json.* to deploy\/grafana/);
    // The manifests' folders are as without the flag.
    assert.ok((await readdir(join(work, 'deploy'))).includes('operator'));
  });

  it('writes nothing, the manifests included, when the dashboards cannot be written', async () => {
    const blocked = join(work, 'blocked');
    await mkdir(blocked);
    await writeFile(join(blocked, 'grafana'), 'a file where the folder would go');
    const { code, stdout, stderr } = await manifests(['--grafana', 'blocked/grafana/dashboards']);
    assert.equal(code, 1);
    assert.equal(stdout, '', 'no manifests on stdout');
    assert.match(stderr, /cannot write .*blocked\/grafana.*nothing was written/);
  });

  it('refuses --grafana-configmap alone, and --grafana on the --out folder', () => {
    assert.throws(
      () => parseManifestsArguments(['--module', 'm.js', '--grafana-configmap'], work),
      (e) => e instanceof UsageError && /needs --grafana <dir>/.test(e.message),
    );
    assert.throws(
      () => parseManifestsArguments(['--module', 'm.js', '--out', 'k8s', '--grafana', './k8s'], work),
      (e) => e instanceof UsageError && /is the --out folder/.test(e.message),
    );
    assert.deepEqual(parseManifestsArguments(['--module', 'm.js', '--grafana', 'g'], work).valueOf(), {
      ...(parseManifestsArguments(['--module', 'm.js'], work) as object),
      grafana: { dir: 'g', configMap: false },
    });
  });
});
