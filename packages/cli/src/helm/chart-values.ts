import { stringify } from 'yaml';
import { GENERATED_NOTICE, type Manifest } from '@nestor/operator/manifests';
import type { Container } from './chart-deployment.js';

// values.yaml: what an install may change, each part commented, only the parts the module
// leaves to the Deployment's variables.

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

/** What values.yaml starts with, from the command line (HelmChartOptions). */
export interface ValuesOptions {
  name: string;
  image: string;
  serviceMonitor: boolean;
  networkPolicy: boolean;
}

/** The text of values.yaml: the image, replicas and resources, and the switches the chart has. */
export function valuesOf(
  deployment: Manifest,
  container: Container,
  options: ValuesOptions,
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
