// `nestor manifests --helm`: a Helm chart from the same objects the kustomize folders hold.
// The objects are made with placeholders where the chart takes a value (the release's
// namespace, the image), and some of their parts are marked to become template blocks
// (resources, the metrics port, the CRDs' keep policy); they are then written as YAML and
// the placeholders turned into template expressions. Everything not in values.yaml is as
// the decorators and the module's options make it, as in the kustomize output.
import { stringify } from 'yaml';
import {
  GENERATED_NOTICE,
  OPERATOR_VARIABLES,
  type Manifest,
  type OperatorManifests,
} from '@nestor/operator/manifests';
import { chartDeployment, containerOf } from './chart-deployment.js';
import { imageParts, valuesOf } from './chart-values.js';
import { TemplateBlocks, type Condition } from './template-blocks.js';
import { valuesSchema } from './values-schema.js';

export interface HelmChartOptions {
  /** The chart's name: the operator's. */
  name: string;
  /** The chart's version (SemVer 2). */
  version: string;
  /** The image the values start with, `repository[:tag][@digest]`. */
  image: string;
  /** The ServiceMonitor is on by default (`--service-monitor`). */
  serviceMonitor: boolean;
  /** The NetworkPolicies are on by default (not `--no-network-policy`). */
  networkPolicy: boolean;
}

/** The template files of a chart, by path, from objects made for CHART_NAMESPACE and CHART_IMAGE. */
export function helmChart(manifests: OperatorManifests, options: HelmChartOptions): Record<string, string> {
  const blocks = new TemplateBlocks();
  const deployment = manifests.deployment[0];
  if (!deployment) throw new Error('the manifests hold no Deployment');
  const metricsNamePrefix = `${options.name}-metrics-`;
  const container = containerOf(deployment);
  const environment = container.env ?? [];
  const variable = (name: string) => environment.find((entry) => entry.name === name);
  // What can be turned on and off depends on what the module leaves to the Deployment's variables.
  const leaderElection = variable(OPERATOR_VARIABLES.leaderElect) !== undefined;
  const metrics = manifests.metrics !== undefined && variable(OPERATOR_VARIABLES.metrics) !== undefined;
  const metricsOn = metrics ? '.Values.metrics.enable' : 'true';
  const monitor = manifests.metrics?.some((object) => object.kind === 'ServiceMonitor') ?? false;
  const admission = (manifests.webhooks ?? []).some((object) => object.kind.endsWith('WebhookConfiguration'));

  const values = valuesOf(deployment, container, options, { leaderElection, metrics, monitor, admission });

  const files: Record<string, string> = {};
  const template = (file: string, documents: { object: Manifest; when?: Condition }[]) => {
    if (documents.length === 0) return;
    files[`templates/${file}`] =
      `{{- /* ${GENERATED_NOTICE} */ -}}\n` + documents.map((d) => blocks.document(d.object, d.when)).join('');
  };

  template(
    'crds.yaml',
    manifests.crds.map((crd) => ({
      object: withAnnotation(crd as unknown as Manifest, blocks, '.Values.crd.keep', 'helm.sh/resource-policy', 'keep'),
      when: '.Values.crd.enable',
    })),
  );
  const isMetrics = (object: Manifest) => object.metadata.name.startsWith(metricsNamePrefix);
  template(
    'rbac.yaml',
    manifests.rbac.map((object) => ({ object, ...(isMetrics(object) && metrics ? { when: metricsOn } : {}) })),
  );
  template('deployment.yaml', [
    { object: chartDeployment(deployment, blocks, options.name, { leaderElection, metrics }) },
  ]);
  const metricsObjects = manifests.metrics ?? [];
  const certificates = (object: Manifest) => object.apiVersion.startsWith('cert-manager.io/');
  template(
    'metrics.yaml',
    metricsObjects
      .filter((object) => object.kind !== 'ServiceMonitor' && !certificates(object))
      .map((object) => ({ object, ...(metrics ? { when: metricsOn } : {}) })),
  );
  template(
    'monitor.yaml',
    metricsObjects
      .filter((object) => object.kind === 'ServiceMonitor')
      .map((object) => ({
        object,
        when: metrics ? `and ${metricsOn} .Values.prometheus.enable` : '.Values.prometheus.enable',
      })),
  );
  template(
    'webhooks.yaml',
    (manifests.webhooks ?? [])
      .filter((object) => !certificates(object))
      .map((object) => ({
        object,
        ...(object.kind.endsWith('WebhookConfiguration') ? { when: '.Values.webhook.enable' } : {}),
      })),
  );
  template('certificates.yaml', [
    ...(manifests.webhooks ?? []).filter(certificates).map((object) => ({ object })),
    ...metricsObjects.filter(certificates).map((object) => ({ object, ...(metrics ? { when: metricsOn } : {}) })),
  ]);
  template(
    'network-policy.yaml',
    (manifests.networkPolicies ?? []).map((object) => ({
      object,
      when:
        object.metadata.labels?.['app.kubernetes.io/component'] === 'metrics' && metrics
          ? `and .Values.networkPolicy.enable ${metricsOn}`
          : '.Values.networkPolicy.enable',
    })),
  );
  files['templates/NOTES.txt'] = notes(options.name);
  files['templates/_helpers.tpl'] = helpers(options.name);
  const tag = imageParts(options.image).tag || 'latest';
  files['Chart.yaml'] =
    `# ${GENERATED_NOTICE}\n` +
    stringify({
      apiVersion: 'v2',
      name: options.name,
      description: `The ${options.name} operator: its CRDs, RBAC and Deployment, from its decorators.`,
      type: 'application',
      version: options.version,
      appVersion: tag,
    });
  files['values.yaml'] = values;
  files['values.schema.json'] = valuesSchema({ leaderElection, metrics, monitor, admission });
  return Object.fromEntries(Object.entries(files).map(([path, text]) => [path, blocks.expand(text)]));
}

/** The object with an annotation written only when the condition holds. */
function withAnnotation(
  object: Manifest,
  blocks: TemplateBlocks,
  condition: Condition,
  key: string,
  value: string,
): Manifest {
  const copy = structuredClone(object);
  const annotations = copy.metadata.annotations;
  // No `annotations:` left empty (null) when the condition fails.
  copy.metadata.annotations = annotations
    ? { ...annotations, [key]: blocks.ifThen(condition, value) }
    : blocks.ifThen(condition, { [key]: value });
  return copy;
}

/** The image reference from the values: repository, then :tag (else appVersion, unless a digest), then @digest. */
function helpers(name: string): string {
  return [
    `{{- /* ${GENERATED_NOTICE} */ -}}`,
    `{{- define "${name}.image" -}}`,
    '{{- $image := .Values.image.repository -}}',
    '{{- $tag := .Values.image.tag | default (ternary "" .Chart.AppVersion (not (empty .Values.image.digest))) | toString -}}',
    '{{- if $tag }}{{ $image = printf "%s:%s" $image $tag }}{{ end -}}',
    '{{- if .Values.image.digest }}{{ $image = printf "%s@%s" $image .Values.image.digest }}{{ end -}}',
    '{{- $image -}}',
    '{{- end -}}',
    '',
  ].join('\n');
}

function notes(name: string): string {
  return [
    `{{- /* ${GENERATED_NOTICE} */ -}}`,
    `{{ .Chart.Name }} {{ .Chart.AppVersion }} is installed in {{ .Release.Namespace }} (release {{ .Release.Name }}).`,
    '',
    `  kubectl -n {{ .Release.Namespace }} rollout status deployment/${name}`,
    '',
    'helm uninstall removes the operator and leaves its CRDs and custom resources{{ if not .Values.crd.keep }},',
    'but for crd.keep false: then it deletes the CRDs, and every custom resource of their kinds{{ end }}.',
    '',
  ].join('\n');
}
