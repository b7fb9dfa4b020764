// `nestor import crd` run as a process, as a user runs it: what it does when its reader
// goes away (`| head`), on a source that never ends, and on a Helm template.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const crds = join(here, '..', '..', 'fixtures', 'crds');
const work = await mkdtemp(join(tmpdir(), 'nestor-import-bin-'));
after(() => rm(work, { recursive: true, force: true }));

/**
 * The bin with its stdout read, or closed at once (`closeStdout`), as `| head -n 0` does; its
 * heap bounded by `heapMb`, and killed after 60 s.
 */
function nestor(
  args: string[],
  { closeStdout = false, heapMb }: { closeStdout?: boolean; heapMb?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const node = heapMb ? [`--max-old-space-size=${heapMb}`] : [];
    const child = spawn(process.execPath, [...node, join(here, '..', 'main.js'), 'import', 'crd', ...args], {
      cwd: work,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    if (closeStdout) child.stdout.destroy();
    else child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const bound = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(bound);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('nestor import crd, run as a process', () => {
  it('ends quietly when its reader is gone (| head), with its files written', async () => {
    const { code, stderr } = await nestor([crds, '--out', 'piped'], { closeStdout: true });
    assert.equal(stderr, '');
    assert.equal(code, 0);
    assert.deepEqual((await readdir(join(work, 'piped'))).sort(), [
      'cert-manager.io',
      'gateway.networking.k8s.io',
      'monitoring.coreos.com',
    ]);
  });

  // Linux, as every test here: the control plane and the CI are.
  it('reads a source that never ends (/dev/zero) only to its cap', async () => {
    const { code, stderr } = await nestor(['/dev/zero', '--out', 'zero']);
    assert.equal(code, 1);
    assert.equal(stderr, 'nestor import crd: nothing was changed: /dev/zero: larger than 16 MiB; is it a CRD file?\n');
  });

  it('refuses a large YAML file that holds no CRD without building its tree, in a 256 MB heap', async () => {
    // 15.5 MiB of small mappings in a list: the YAML parser took 67 s and 2.6 GB on it.
    const item = '- name: item\n  values: [1, 2, 3]\n  nested:\n    a: b\n    c: d\n';
    await writeFile(join(work, 'big.yaml'), 'items:\n' + item.repeat(Math.floor((15.5 * 1024 * 1024) / item.length)));
    const { code, stderr } = await nestor(['big.yaml', '--out', 'big'], { heapMb: 256 });
    assert.equal(stderr, 'nestor import crd: nothing was changed: no CustomResourceDefinition in big.yaml\n');
    assert.equal(code, 1);
  });

  it('says to render a Helm template first, without a stack', async () => {
    await writeFile(
      join(work, 'crd-template.yaml'),
      [
        '{{- if .Values.crds.enabled }}',
        'apiVersion: apiextensions.k8s.io/v1',
        'kind: CustomResourceDefinition',
        'metadata:',
        '  name: widgets.{{ .Values.group }}',
        '  labels: {{- include "chart.labels" . | nindent 4 }}',
        '{{- end }}',
      ].join('\n'),
    );
    const { code, stderr } = await nestor(['crd-template.yaml', '--out', 'helm']);
    assert.equal(code, 1);
    assert.match(stderr, /^nestor import crd: nothing was changed: crd-template\.yaml: not YAML or JSON: /);
    assert.match(
      stderr,
      /a Helm template, not YAML yet\. Render it first: helm template <release> <chart> \| nestor import crd -\n$/,
    );
    assert.doesNotMatch(stderr, /\n\s+at /);
  });
});
