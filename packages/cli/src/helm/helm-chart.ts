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
import { valuesSchema } from './values-schema.js';

/** The namespace the objects are made for: it becomes the release's namespace. */
export const CHART_NAMESPACE = 'x-nestor-chart-namespace-x';
/** The image the objects are made with: it becomes the image of the values (image.repository, tag, digest). */
export const CHART_IMAGE = 'x-nestor-chart-image-x';

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

/** A condition in a template: a Go template pipeline, e.g. `.Values.crd.enable`. */
type Condition = string;

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

interface Container {
  image: string;
  env?: { name: string; value?: string }[];
  ports?: { name: string }[];
  resources?: unknown;
  volumeMounts?: { name: string }[];
  [field: string]: unknown;
}

interface PodSpec {
  containers: Container[];
  volumes?: { name: string }[];
  [field: string]: unknown;
}

function podSpecOf(deployment: Manifest): PodSpec {
  return (deployment.spec as { template: { spec: PodSpec } }).template.spec;
}

function containerOf(deployment: Manifest): Container {
  const container = podSpecOf(deployment).containers[0];
  if (!container) throw new Error(`the Deployment ${deployment.metadata.name} has no container`);
  return container;
}

/** The Deployment with the values of the chart in it. */
function chartDeployment(
  deployment: Manifest,
  blocks: TemplateBlocks,
  name: string,
  has: { leaderElection: boolean; metrics: boolean },
): Manifest {
  const copy = structuredClone(deployment);
  const spec = copy.spec as { replicas: unknown; template: { metadata: Record<string, unknown>; spec: PodSpec } };
  spec.replicas = blocks.expression('.Values.replicas');
  const podMetadata = spec.template.metadata;
  const given = podMetadata.annotations as Record<string, string> | undefined;
  if (given) {
    // The values' annotations after those of the objects, in the same map.
    const more = blocks.raw((indent) => {
      const pad = ' '.repeat(indent);
      return `${pad}{{- with .Values.podAnnotations }}\n${pad}{{- toYaml . | nindent ${indent} }}\n${pad}{{- end }}`;
    });
    podMetadata.annotations = { ...given, [more]: '' };
  } else {
    podMetadata[blocks.raw((indent) => withValues('podAnnotations', 'annotations', indent))] = '';
  }
  const pod = spec.template.spec;
  const container = pod.containers[0]!;
  const metricsOn = '.Values.metrics.enable';
  container.image = blocks.expression(`include "${name}.image" . | quote`);
  // After image, as kubectl and kubebuilder write it.
  const entries = Object.entries(container);
  const at = entries.findIndex(([key]) => key === 'image') + 1;
  entries.splice(at, 0, ['imagePullPolicy', blocks.expression('.Values.image.pullPolicy')]);
  const rebuilt = Object.fromEntries(entries) as Container;
  rebuilt.env = (rebuilt.env ?? []).map((entry) => {
    if (has.leaderElection && entry.name === OPERATOR_VARIABLES.leaderElect)
      return { ...entry, value: blocks.expression('.Values.leaderElection.enable | quote') };
    if (has.metrics && entry.name === OPERATOR_VARIABLES.metrics)
      return { ...entry, value: blocks.expression(`ternary ${JSON.stringify(entry.value)} "0" ${metricsOn} | quote`) };
    if (has.metrics && entry.name === OPERATOR_VARIABLES.metricsCertPath) return blocks.ifThen(metricsOn, entry);
    return entry;
  }) as Container['env'];
  if (has.metrics) {
    rebuilt.ports = rebuilt.ports?.map((port) =>
      port.name === 'metrics' ? blocks.ifThen(metricsOn, port) : port,
    ) as Container['ports'];
    rebuilt.volumeMounts = rebuilt.volumeMounts?.map((mount) =>
      mount.name === 'metrics-certs' ? blocks.ifThen(metricsOn, mount) : mount,
    ) as Container['volumeMounts'];
    pod.volumes = pod.volumes?.map((volume) =>
      volume.name === 'metrics-certs' ? blocks.ifThen(metricsOn, volume) : volume,
    ) as PodSpec['volumes'];
  }
  pod.containers = [
    Object.fromEntries(
      Object.entries(rebuilt).map(([key, value]) =>
        key === 'resources'
          ? [blocks.raw((indent) => withValues('resources', 'resources', indent, true)), '']
          : [key, value],
      ),
    ) as Container,
  ];
  for (const [value, field] of [
    ['nodeSelector', 'nodeSelector'],
    ['affinity', 'affinity'],
    ['tolerations', 'tolerations'],
  ] as const) {
    pod[blocks.raw((indent) => withValues(value, field, indent))] = '';
  }
  return copy;
}

/** A field from a value, written only when the value is not empty (or always). */
function withValues(value: string, field: string, indent: number, always = false): string {
  const pad = ' '.repeat(indent);
  if (always) return `${pad}${field}:\n${pad}  {{- toYaml .Values.${value} | nindent ${indent + 2} }}`;
  return `${pad}{{- with .Values.${value} }}\n${pad}${field}:\n${pad}  {{- toYaml . | nindent ${indent + 2} }}\n${pad}{{- end }}`;
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

/**
 * The image as repository, tag and digest, as the container runtime reads it: a tag is
 * after the last ':' of the last path segment; no tag and no digest is `latest`.
 */
export function imageParts(image: string): { repository: string; tag: string; digest: string } {
  const at = image.indexOf('@');
  const named = at >= 0 ? image.slice(0, at) : image;
  const digest = at >= 0 ? image.slice(at + 1) : '';
  const slash = named.lastIndexOf('/');
  const colon = named.lastIndexOf(':');
  const tagged = colon > slash;
  return {
    repository: tagged ? named.slice(0, colon) : named,
    tag: tagged ? named.slice(colon + 1) : digest ? '' : 'latest',
    digest,
  };
}

function valuesOf(
  deployment: Manifest,
  container: Container,
  options: HelmChartOptions,
  has: { leaderElection: boolean; metrics: boolean; monitor: boolean; admission: boolean },
): string {
  const replicas = (deployment.spec as { replicas: number }).replicas;
  const sections = [
    `# ${GENERATED_NOTICE}`,
    `# What an install of ${options.name} may change. The rest (RBAC, ports, probes, the`,
    "# security context) follows the operator's decorators and module options: generate again.",
    '',
    "# The namespace is the release's: helm install -n <namespace> [--create-namespace].",
    '',
    "# The container image: repository, tag (default: the chart's appVersion), digest (when",
    '# set, pulled by digest, as repository[:tag]@digest).',
    stringify({ image: { ...imageParts(options.image), pullPolicy: 'IfNotPresent' } }).trimEnd(),
    '',
    '# Pods of the Deployment. When the module shards its controllers (OperatorModule',
    '# sharding), each replica is a shard: the shards follow the replicas, no other setting.',
    '# Without sharding, leader election keeps one replica working and the others on standby.',
    `replicas: ${replicas}`,
    '',
    stringify({ resources: container.resources }).trimEnd(),
  ];
  if (has.leaderElection) {
    sections.push(
      '',
      '# LEADER_ELECT: one replica reconciles at a time, holding a Lease. Turn it off only with',
      '# one replica and no sharding.',
      'leaderElection:',
      '  enable: true',
    );
  }
  if (has.metrics) {
    sections.push(
      '',
      '# /metrics, its Service and RBAC; off: METRICS_BIND_ADDRESS=0, none of them.',
      'metrics:',
      '  enable: true',
    );
  }
  if (has.monitor) {
    sections.push(
      '',
      "# A Prometheus Operator ServiceMonitor for /metrics: needs the Prometheus Operator's CRDs.",
      'prometheus:',
      `  enable: ${options.serviceMonitor}`,
    );
  }
  if (has.admission) {
    sections.push(
      '',
      '# The Validating/MutatingWebhookConfigurations. Off: the API server calls no admission',
      '# webhook; the webhook server, its Service and certificate stay (CRD conversion needs them).',
      'webhook:',
      '  enable: true',
    );
  }
  sections.push(
    '',
    '# The CustomResourceDefinitions are templates, upgraded with the chart (a chart crds/ folder',
    '# is never upgraded). enable: false when they are installed apart. keep: helm uninstall',
    '# leaves them, and so every custom resource of their kinds (helm.sh/resource-policy: keep).',
    'crd:',
    '  enable: true',
    '  keep: true',
    '',
    '# NetworkPolicies for the pods: /metrics only from namespaces labelled metrics=enabled, the',
    "# webhook port from anywhere, other ports from the pod's node only.",
    'networkPolicy:',
    `  enable: ${options.networkPolicy}`,
    '',
    '# Added to the pods as they are.',
    'podAnnotations: {}',
    'nodeSelector: {}',
    'tolerations: []',
    'affinity: {}',
    '',
  );
  return sections.join('\n');
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

/**
 * Placeholders for template text: a string put in an object where the chart needs a
 * template expression or block, made into that text once the object is YAML.
 */
class TemplateBlocks {
  private readonly blocks = new Map<string, (indent: number, prefix: string) => string>();
  private readonly inline = new Map<string, string>();

  /** A scalar that is the expression's value. */
  expression(pipeline: string): string {
    const token = this.token();
    this.inline.set(token, `{{ ${pipeline} }}`);
    return token;
  }

  /**
   * A list item or a map value written only when the condition holds: in its place, the
   * value's YAML between `if` and `end`.
   */
  ifThen<T>(condition: Condition, value: T): T {
    const token = this.token();
    this.blocks.set(token, (indent, prefix) => {
      const pad = ' '.repeat(indent);
      const yaml = this.escape(
        stringify(prefix.startsWith('-') ? [value] : { [prefix.slice(0, -2)]: value }, {
          lineWidth: 0,
          aliasDuplicateObjects: false,
        }),
      );
      const lines = yaml
        .trimEnd()
        .split('\n')
        .map((line) => pad + line);
      return [`{{- if ${condition} }}`, ...lines, '{{- end }}'].join('\n');
    });
    return token as T;
  }

  /** A map key whose whole line becomes the text made for its indentation. */
  raw(text: (indent: number) => string): string {
    const token = this.token();
    this.blocks.set(token, (indent) => text(indent));
    return token;
  }

  /** The object's YAML as one document of a template file, written only when the condition holds. */
  document(object: Manifest, when?: Condition): string {
    const yaml = this.escape(stringify(object, { lineWidth: 0, aliasDuplicateObjects: false }));
    return when ? `{{- if ${when} }}\n---\n${yaml}{{- end }}\n` : `---\n${yaml}`;
  }

  /** The text with every placeholder replaced. */
  expand(text: string): string {
    let out = text.replace(
      /^( *)(- |[^\s:][^:\n]*: )?(x-nestor-t\d+-x)(: ''|: "")?$/gm,
      (line, indent: string, prefix: string | undefined, token: string) => {
        const block = this.blocks.get(token);
        if (!block) return line;
        // A raw key (`token: ''`) spans its line; a list item or map value takes the prefix's place.
        return block(indent.length, prefix ?? '');
      },
    );
    out = out.replace(/x-nestor-t\d+-x/g, (token) => this.inline.get(token) ?? token);
    return out.replaceAll(CHART_NAMESPACE, '{{ .Release.Namespace }}');
  }

  /** Text of the objects is no template: what looks like an action in it is written as text. */
  private escape(yaml: string): string {
    return yaml.replaceAll('{{', '{{ "{{" }}');
  }

  private token(): string {
    return `x-nestor-t${this.blocks.size + this.inline.size}-x`;
  }
}
