import 'reflect-metadata';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { operatorManifests, type Manifest } from '@nestor/operator/manifests';
import { parse } from 'yaml';
import { CHART_IMAGE, CHART_NAMESPACE } from './chart-placeholders.js';
import { imageParts } from './chart-values.js';
import { helmChart } from './helm-chart.js';
import { manifestsCommand } from '../manifests-command.js';

const here = join(dirname(fileURLToPath(import.meta.url)), '..');

async function nestor(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await manifestsCommand(argv, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    cwd: here,
  });
  return { code, stdout, stderr };
}

const chartOptions = {
  name: 'op',
  version: '0.1.0',
  image: 'registry.example/op:1.2.3',
  serviceMonitor: false,
  networkPolicy: true,
};

describe('nestor manifests --helm', () => {
  it('writes Chart.yaml, values.yaml and the templates of what the kustomize output holds, nothing on stdout', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nestor-helm-'));
    try {
      const chart = join(dir, 'chart');
      const { code, stdout, stderr } = await nestor([
        '--module',
        join(here, 'fixtures', 'webhook-app.module.js'),
        '--helm',
        chart,
        '--name',
        'gadget-operator',
        '--image',
        'registry.example/gadget:2.0.0',
        '--service-monitor',
      ]);
      assert.equal(code, 0, stderr);
      assert.equal(stdout, '');
      assert.match(
        stderr,
        /wrote the chart gadget-operator to \S+chart: Chart\.yaml, values\.yaml, values\.schema\.json, templates\//,
      );
      assert.match(
        stderr,
        /install: helm install gadget-operator \S+ --namespace gadget-operator-system --create-namespace/,
      );
      assert.deepEqual((await readdir(join(chart, 'templates'))).sort(), [
        'NOTES.txt',
        '_helpers.tpl',
        'certificates.yaml',
        'crds.yaml',
        'deployment.yaml',
        'metrics.yaml',
        'monitor.yaml',
        'network-policy.yaml',
        'rbac.yaml',
        'webhooks.yaml',
      ]);
      const meta = parse(await readFile(join(chart, 'Chart.yaml'), 'utf8')) as Record<string, string>;
      assert.equal(meta.apiVersion, 'v2');
      assert.equal(meta.name, 'gadget-operator');
      assert.equal(meta.appVersion, '2.0.0');
      const values = parse(await readFile(join(chart, 'values.yaml'), 'utf8')) as Record<string, unknown>;
      // Every value written has its place in the schema, which refuses any other.
      const schema = JSON.parse(await readFile(join(chart, 'values.schema.json'), 'utf8')) as {
        additionalProperties: boolean;
        properties: Record<string, unknown>;
      };
      assert.equal(schema.additionalProperties, false);
      for (const key of Object.keys(values)) assert.ok(key in schema.properties, `${key} is not in values.schema.json`);
      assert.deepEqual(values.image, {
        repository: 'registry.example/gadget',
        tag: '2.0.0',
        digest: '',
        pullPolicy: 'IfNotPresent',
      });
      assert.equal(values.replicas, 1);
      assert.deepEqual(values.crd, { enable: true, keep: true });
      assert.deepEqual(values.prometheus, { enable: true });
      assert.deepEqual(values.networkPolicy, { enable: true });
      assert.deepEqual(values.leaderElection, { enable: true });
      assert.deepEqual(values.metrics, { enable: true });
      assert.deepEqual(values.webhook, { enable: true });
      for (const file of await readdir(join(chart, 'templates'))) {
        const text = await readFile(join(chart, 'templates', file), 'utf8');
        assert.doesNotMatch(text, /x-nestor-/, `${file} holds a placeholder`);
        assert.doesNotMatch(text, /gadget-operator-system/, `${file} names a namespace, not the release's`);
      }
      const webhooks = await readFile(join(chart, 'templates', 'webhooks.yaml'), 'utf8');
      assert.match(webhooks, /namespace: \{\{ \.Release\.Namespace \}\}/);
      assert.match(webhooks, /\{\{- if \.Values\.webhook\.enable \}\}\n---\napiVersion: admissionregistration/);
      const certificates = await readFile(join(chart, 'templates', 'certificates.yaml'), 'utf8');
      assert.match(
        certificates,
        /cert-manager\.io\/v1[\s\S]*gadget-operator-webhook-service\.\{\{ \.Release\.Namespace \}\}\.svc/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('writes again over its own chart: removes the templates no longer generated, keeps a file of the user', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nestor-helm-'));
    try {
      const webhooks = ['--module', join(here, 'fixtures', 'webhook-app.module.js'), '--helm', dir, '--name', 'op'];
      assert.equal((await nestor(webhooks)).code, 0);
      await writeFile(join(dir, 'templates', 'extra.yaml'), 'apiVersion: v1\nkind: ConfigMap\n');
      const again = await nestor(['--module', join(here, 'fixtures', 'app.module.js'), '--helm', dir, '--name', 'op']);
      assert.equal(again.code, 0, again.stderr);
      const removed = /removed what an earlier nestor manifests wrote there: (.*)\n/.exec(again.stderr)?.[1];
      assert.deepEqual(removed?.split(', ').sort(), ['templates/certificates.yaml', 'templates/webhooks.yaml']);
      const left = await readdir(join(dir, 'templates'));
      assert.ok(left.includes('extra.yaml'));
      assert.ok(!left.includes('webhooks.yaml'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('writes Grafana dashboards beside the chart with --grafana, not into it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nestor-helm-'));
    try {
      const module = [
        '--module',
        join(here, 'fixtures', 'app.module.js'),
        '--name',
        'op',
        '--helm',
        join(dir, 'chart'),
      ];
      const clash = await nestor([...module, '--grafana', join(dir, 'chart')]);
      assert.equal(clash.code, 2);
      assert.match(clash.stderr, /--grafana \S+ is the --helm folder/);
      assert.deepEqual(await readdir(dir), []);
      const both = await nestor([...module, '--grafana', join(dir, 'dashboards')]);
      assert.equal(both.code, 0, both.stderr);
      assert.deepEqual((await readdir(join(dir, 'dashboards'))).sort(), ['op-controllers.json', 'op-runtime.json']);
      assert.ok((await readdir(join(dir, 'chart'))).includes('Chart.yaml'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses --out and --create-namespace beside --helm, writing nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nestor-helm-'));
    try {
      const module = ['--module', join(here, 'fixtures', 'app.module.js'), '--helm', join(dir, 'chart')];
      const both = await nestor([...module, '--out', join(dir, 'k8s')]);
      assert.equal(both.code, 2);
      assert.match(both.stderr, /--helm and --out: choose one/);
      const namespace = await nestor([...module, '--create-namespace']);
      assert.equal(namespace.code, 2);
      assert.match(namespace.stderr, /helm install --create-namespace makes it/);
      assert.deepEqual(await readdir(dir), []);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('helmChart', () => {
  it('writes what looks like a template action in the objects as text', () => {
    const manifests = operatorManifests({
      name: 'op',
      namespace: CHART_NAMESPACE,
      image: CHART_IMAGE,
      controllers: [],
    });
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'things.example.com' },
      spec: { description: 'a {{ .Values.secret }} in a description' },
    } as unknown as (typeof manifests.crds)[number];
    const files = helmChart({ ...manifests, crds: [crd] }, chartOptions);
    assert.match(
      files['templates/crds.yaml']!,
      /description: a \{\{ "\{\{" \}\} \.Values\.secret \}\} in a description/,
    );
  });

  it('turns the module-fixed settings into no value: leader election the module sets is not in values.yaml', () => {
    const manifests = operatorManifests({
      name: 'op',
      namespace: CHART_NAMESPACE,
      image: CHART_IMAGE,
      controllers: [],
      setByModule: ['leaderElection', 'metrics'],
    });
    const files = helmChart(manifests, chartOptions);
    const values = parse(files['values.yaml']!) as Record<string, unknown>;
    assert.equal(values.leaderElection, undefined);
    assert.equal(values.metrics, undefined);
    const deployment = files['templates/deployment.yaml']!;
    assert.doesNotMatch(deployment, /LEADER_ELECT\b/);
    assert.doesNotMatch(deployment, /\.Values\.metrics/);
    // The metrics objects are there, on no condition: the module serves them whatever the values.
    assert.doesNotMatch(files['templates/metrics.yaml']!, /\{\{- if/);
  });

  it("starts replicas at the module's shard count when it shards its controllers", () => {
    const manifests = operatorManifests({
      name: 'op',
      namespace: CHART_NAMESPACE,
      image: CHART_IMAGE,
      controllers: [],
      shardReplicas: 4,
    });
    const files = helmChart(manifests, chartOptions);
    assert.equal((parse(files['values.yaml']!) as { replicas: number }).replicas, 4);
    assert.match(files['templates/deployment.yaml']!, /replicas: \{\{ \.Values\.replicas \}\}/);
  });

  it("adds the values' pod annotations to those the Deployment has", () => {
    const manifests = operatorManifests({
      name: 'op',
      namespace: CHART_NAMESPACE,
      image: CHART_IMAGE,
      controllers: [],
    });
    const template = (manifests.deployment[0]!.spec as { template: { metadata: Record<string, unknown> } }).template;
    template.metadata.annotations = { 'kubectl.kubernetes.io/default-container': 'operator' };
    const deployment = helmChart(manifests, chartOptions)['templates/deployment.yaml']!;
    assert.match(
      deployment,
      /\n {6}annotations:\n {8}kubectl\.kubernetes\.io\/default-container: operator\n {8}\{\{- with \.Values\.podAnnotations \}\}\n {8}\{\{- toYaml \. \| nindent 8 \}\}\n {8}\{\{- end \}\}\n/,
    );
  });

  it('splits the image as the container runtime reads it', () => {
    const cases: [string, ReturnType<typeof imageParts>][] = [
      ['op', { repository: 'op', tag: 'latest', digest: '' }],
      ['op:1.0', { repository: 'op', tag: '1.0', digest: '' }],
      ['registry:5000/team/op', { repository: 'registry:5000/team/op', tag: 'latest', digest: '' }],
      ['registry:5000/team/op:2', { repository: 'registry:5000/team/op', tag: '2', digest: '' }],
      ['op@sha256:abc', { repository: 'op', tag: '', digest: 'sha256:abc' }],
      ['op:1@sha256:abc', { repository: 'op', tag: '1', digest: 'sha256:abc' }],
    ];
    for (const [image, parts] of cases) assert.deepEqual(imageParts(image), parts, image);
  });

  it('keeps the Deployment a Deployment: the objects it is made from are not changed', () => {
    const manifests = operatorManifests({
      name: 'op',
      namespace: CHART_NAMESPACE,
      image: CHART_IMAGE,
      controllers: [],
    });
    const before = structuredClone(manifests.deployment[0]) as Manifest;
    helmChart(manifests, chartOptions);
    assert.deepEqual(manifests.deployment[0], before);
  });
});
