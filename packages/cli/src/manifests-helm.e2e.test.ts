// `nestor manifests --helm` with the real helm (built from helm.sh/helm/v4 into Nestor's
// cache, as the control plane is): the chart lints, what `helm template` renders is
// accepted by the API server (a server-side dry run, as `kubectl apply --dry-run=server`),
// `helm install` installs it, `helm upgrade` with a changed value changes the Deployment,
// and `helm uninstall` removes the operator and leaves the CRDs and the custom resources.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { KindRegistry, resourcePath } from '@nestor/operator/runtime';
import { type KubeObject } from '@nestor/operator';
import { ensureHelm, TestEnvironment } from '@nestor/testing';
import { parseAllDocuments } from 'yaml';
import { GADGET_GROUP } from './fixtures/gadget.js';
import { runCommand } from './test-support/run-command.js';

const here = dirname(fileURLToPath(import.meta.url));
const NAME = `gadget-helm-${randomBytes(3).toString('hex')}`;
const CRD = `gadgets.${GADGET_GROUP}`;

let env: TestEnvironment;
let helm: string;
let work: string;
let chart: string;
let namespace: string;

/** helm against the test control plane, with its own config and cache folders; it must succeed. */
async function runHelm(args: string[]) {
  const result = await helmResult(args);
  assert.equal(result.code, 0, `helm ${args.join(' ')}:\n${result.output}`);
  return result.stdout;
}

function helmResult(args: string[]) {
  return runCommand(helm, [...args, '--kubeconfig', env.kubeconfigPath], work, {
    timeoutMs: 120_000,
    env: {
      HELM_CACHE_HOME: join(work, 'helm-cache'),
      HELM_CONFIG_HOME: join(work, 'helm-config'),
      HELM_DATA_HOME: join(work, 'helm-data'),
    },
  });
}

const kinds = new KindRegistry();
for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
  const plural = `${kind.toLowerCase()}s`;
  kinds.register({ group: 'admissionregistration.k8s.io', version: 'v1', kind, plural, namespaced: false });
}
const pathOf = (object: KubeObject) =>
  resourcePath(kinds.forObject(object), object.metadata?.namespace, object.metadata?.name);

/** Every object server-side applied in a dry run: the API server accepts each as it is. */
async function acceptedInDryRun(objects: KubeObject[]): Promise<void> {
  for (const object of objects) {
    const { status, text } = await env.client.raw(
      'PATCH',
      `${pathOf(object)}?dryRun=All&fieldManager=helm-test&force=true`,
      object,
      'application/apply-patch+yaml',
    );
    assert.equal(status < 300, true, `${object.kind} ${object.metadata?.name}: ${status} ${text}`);
  }
}

async function get<T>(path: string): Promise<{ status: number; object?: T }> {
  const { status, text } = await env.client.raw('GET', path);
  return { status, ...(status === 200 ? { object: JSON.parse(text) as T } : {}) };
}

interface DeploymentDoc {
  status?: { readyReplicas?: number };
  spec: {
    replicas: number;
    template: {
      spec: {
        containers: {
          image: string;
          env: { name: string; value?: string }[];
          resources?: { limits?: Record<string, string> };
        }[];
      };
    };
  };
}
const deploymentPath = () => `/apis/apps/v1/namespaces/${namespace}/deployments/${NAME}`;

before(async () => {
  // A test that cannot get helm fails here, saying why (no Go, a failed build): never skipped.
  helm = await ensureHelm({ onProgress: (line) => process.stderr.write(`[helm] ${line}\n`) });
  env = await TestEnvironment.start({ useExistingCluster: false, nodes: 1 });
  namespace = await env.createNamespace('helm');
  work = await mkdtemp(join(tmpdir(), 'nestor-helm-e2e-'));
  chart = join(work, NAME);
  const { code, output } = await runCommand(
    process.execPath,
    [
      join(here, 'main.js'),
      'manifests',
      '--module',
      join(here, 'fixtures', 'app.module.js'),
      '--helm',
      chart,
      '--name',
      NAME,
      '--image',
      'registry.example/gadget-operator:1.0.0',
    ],
    work,
    { timeoutMs: 60_000 },
  );
  assert.equal(code, 0, output);
  assert.match(
    output,
    new RegExp(`install: helm install ${NAME} ${chart} --namespace ${NAME}-system --create-namespace`),
  );
});

after(async () => {
  await env?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('nestor manifests --helm with the real helm', () => {
  it('writes a chart helm lint passes, with the values switched off as on', async () => {
    await runHelm(['lint', '--strict', chart]);
    await runHelm([
      'lint',
      '--strict',
      chart,
      '--set',
      'metrics.enable=false,networkPolicy.enable=false,crd.enable=false,leaderElection.enable=false,prometheus.enable=true',
    ]);
  });

  it('refuses values the chart does not have, or of the wrong type, naming them (values.schema.json)', async () => {
    const misspelt = await helmResult(['template', NAME, chart, '--set', 'replica=3']);
    assert.notEqual(misspelt.code, 0);
    assert.match(misspelt.output, /additional properties 'replica' not allowed/);
    const negative = await helmResult(['template', NAME, chart, '--set', 'replicas=-1']);
    assert.notEqual(negative.code, 0);
    assert.match(negative.output, /\/replicas': minimum/);
  });

  it('renders objects the API server accepts (server-side dry run), whatever the values', async () => {
    for (const set of [
      [],
      [
        '--set',
        'metrics.enable=false,crd.keep=false,replicas=3,image.tag=2.0.0,leaderElection.enable=false',
        '--set',
        'podAnnotations.team=ops,nodeSelector.zone=a,tolerations[0].key=dedicated,tolerations[0].operator=Exists',
      ],
    ]) {
      const rendered = await runHelm(['template', NAME, chart, '--namespace', namespace, ...set]);
      const objects = parseAllDocuments(rendered)
        .map((document) => document.toJS() as KubeObject | null)
        .filter((object): object is KubeObject => object !== null);
      const kindsRendered = objects.map((object) => object.kind);
      assert.ok(kindsRendered.includes('CustomResourceDefinition'), kindsRendered.join(', '));
      assert.ok(kindsRendered.includes('Deployment'), kindsRendered.join(', '));
      assert.equal(kindsRendered.includes('Service'), set.length === 0, 'the metrics Service follows metrics.enable');
      const deployment = objects.find((object) => object.kind === 'Deployment') as unknown as DeploymentDoc;
      const container = deployment.spec.template.spec.containers[0]!;
      const variable = (name: string) => container.env.find((entry) => entry.name === name)?.value;
      assert.equal(variable('LEADER_ELECT'), set.length ? 'false' : 'true');
      assert.equal(variable('METRICS_BIND_ADDRESS'), set.length ? '0' : ':8443');
      assert.equal(container.image, `registry.example/gadget-operator:${set.length ? '2.0.0' : '1.0.0'}`);
      assert.equal(deployment.spec.replicas, set.length ? 3 : 1);
      const pod = deployment.spec.template as unknown as {
        metadata: { annotations?: Record<string, string> };
        spec: { nodeSelector?: Record<string, string>; tolerations?: unknown[] };
      };
      assert.deepEqual(pod.metadata.annotations, set.length ? { team: 'ops' } : undefined);
      assert.deepEqual(pod.spec.nodeSelector, set.length ? { zone: 'a' } : undefined);
      assert.deepEqual(pod.spec.tolerations, set.length ? [{ key: 'dedicated', operator: 'Exists' }] : undefined);
      await acceptedInDryRun(objects);
    }
    const crd = await get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD}`);
    assert.equal(crd.status, 404, 'a dry run creates nothing');
  });

  it('renders the webhook objects of an operator with webhooks, and the API server accepts them', async () => {
    const webhookChart = join(work, 'webhooks');
    const generated = await runCommand(
      process.execPath,
      [
        join(here, 'main.js'),
        'manifests',
        '--module',
        join(here, 'fixtures', 'webhook-app.module.js'),
        '--helm',
        webhookChart,
        '--name',
        `${NAME}-wh`,
        // cert-manager's kinds are not in the test control plane.
        '--webhook-certificates',
        'self-managed',
      ],
      work,
      { timeoutMs: 60_000 },
    );
    assert.equal(generated.code, 0, generated.output);
    await runHelm(['lint', '--strict', webhookChart]);
    const rendered = await runHelm(['template', NAME, webhookChart, '--namespace', namespace]);
    const objects = parseAllDocuments(rendered)
      .map((document) => document.toJS() as KubeObject | null)
      .filter((object): object is KubeObject => object !== null);
    const configuration = objects.find((object) => object.kind === 'ValidatingWebhookConfiguration') as
      (KubeObject & { webhooks: { clientConfig: { service: { namespace: string } } }[] }) | undefined;
    assert.equal(configuration?.webhooks[0]?.clientConfig.service.namespace, namespace);
    await acceptedInDryRun(objects);
  });

  it('installs and upgrades with --wait on a fake node, and uninstalls leaving the CRDs and custom resources', async () => {
    // --wait: until the Deployment is Available, its pod scheduled on a fake node and Ready.
    await runHelm(['install', NAME, chart, '--namespace', namespace, '--wait', '--timeout', '2m']);
    const installed = await get<DeploymentDoc>(deploymentPath());
    assert.equal(installed.status, 200);
    assert.equal(installed.object!.status?.readyReplicas, 1);
    const container = installed.object!.spec.template.spec.containers[0]!;
    assert.equal(container.image, 'registry.example/gadget-operator:1.0.0');
    assert.equal(installed.object!.spec.replicas, 1);
    assert.equal(container.env.find((e) => e.name === 'LEADER_ELECTION_NAMESPACE')?.value, namespace);
    const crd = await get<{ metadata: { annotations?: Record<string, string> } }>(
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD}`,
    );
    assert.equal(crd.object?.metadata.annotations?.['helm.sh/resource-policy'], 'keep');

    // A custom resource made while the operator is installed: uninstall must leave it.
    const gadgets = `/apis/${GADGET_GROUP}/v1/namespaces/${namespace}/gadgets`;
    const created = await env.client.raw('POST', gadgets, {
      apiVersion: `${GADGET_GROUP}/v1`,
      kind: 'Gadget',
      metadata: { name: 'kept' },
      spec: { message: 'still here' },
    });
    assert.equal(created.status, 201, created.text);

    await runHelm([
      'upgrade',
      NAME,
      chart,
      '--namespace',
      namespace,
      '--set',
      'image.tag=2.0.0,replicas=2,resources.limits.memory=256Mi',
      '--wait',
      '--timeout',
      '2m',
    ]);
    const upgraded = (await get<DeploymentDoc>(deploymentPath())).object!;
    const upgradedContainer = upgraded.spec.template.spec.containers[0]!;
    assert.equal(upgradedContainer.image, 'registry.example/gadget-operator:2.0.0');
    assert.equal(upgraded.spec.replicas, 2);
    assert.equal(upgraded.status?.readyReplicas, 2);
    assert.deepEqual(upgradedContainer.resources?.limits, { cpu: '500m', memory: '256Mi' });
    assert.match(await runHelm(['history', NAME, '--namespace', namespace]), /upgrade complete/i);

    const uninstalled = await runHelm(['uninstall', NAME, '--namespace', namespace]);
    assert.match(uninstalled, new RegExp(`kept due to the resource policy:[\\s\\S]*${CRD}`));
    assert.equal((await get(deploymentPath())).status, 404, 'the Deployment goes');
    assert.equal((await get(`/api/v1/namespaces/${namespace}/serviceaccounts/${NAME}`)).status, 404);
    assert.equal((await get(`/apis/rbac.authorization.k8s.io/v1/clusterroles/${NAME}`)).status, 404);
    assert.equal(
      (await get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD}`)).status,
      200,
      'the CRD stays',
    );
    assert.equal((await get(`${gadgets}/kept`)).status, 200, 'the custom resource stays');

    // Installed again, the release takes the CRD it kept back (Helm's ownership labels stay on it).
    await runHelm(['install', NAME, chart, '--namespace', namespace]);
    assert.equal((await get(deploymentPath())).status, 200);
    await runHelm(['uninstall', NAME, '--namespace', namespace]);
  });
});
