import { OPERATOR_VARIABLES, type Manifest } from '@nestor/operator/manifests';
import type { TemplateBlocks } from './template-blocks.js';

// The chart's Deployment: the operator's, with the image, replicas, resources and pod
// placement from the values, and what the values turn off wrapped in conditions.

export interface Container {
  image: string;
  env?: { name: string; value?: string }[];
  ports?: { name: string }[];
  resources?: unknown;
  volumeMounts?: { name: string }[];
  [field: string]: unknown;
}

export interface PodSpec {
  containers: Container[];
  volumes?: { name: string }[];
  [field: string]: unknown;
}

function podSpecOf(deployment: Manifest): PodSpec {
  return (deployment.spec as { template: { spec: PodSpec } }).template.spec;
}

export function containerOf(deployment: Manifest): Container {
  const container = podSpecOf(deployment).containers[0];
  if (!container) throw new Error(`the Deployment ${deployment.metadata.name} has no container`);
  return container;
}

/** The Deployment with the values of the chart in it. */
export function chartDeployment(
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
