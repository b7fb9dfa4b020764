import { COMPONENT } from './network-policy-manifests.js';
import type { OperatorManifests } from './operator-manifests.js';

/** The folders, in the order they are applied: each holds a kustomization of its own. */
export const MANIFEST_FOLDERS = ['crds', 'namespace', 'operator', 'network-policy', 'members'] as const;

/** One folder with its own kustomization.yaml, applied and deleted on its own. */
export interface ManifestFolder {
  folder: (typeof MANIFEST_FOLDERS)[number];
  /** What it holds and what deleting it deletes: the first lines of its kustomization.yaml. */
  about: string[];
  /** The objects of each file, by file name. */
  objects: Record<string, readonly object[]>;
}

/**
 * The folders `manifestFiles` writes, in the order they are applied. The CRDs and the
 * namespace are apart from the operator because deleting either deletes far more than
 * the operator: every custom resource of those kinds, everything in the namespace.
 */
export function manifestFolders(manifests: OperatorManifests): ManifestFolder[] {
  const folders: ManifestFolder[] = [];
  if (manifests.crds.length) {
    folders.push({
      folder: 'crds',
      about: [
        'The CustomResourceDefinitions: apply them before the operator.',
        'Deleting them deletes every custom resource of their kinds, in every namespace.',
      ],
      objects: { 'crds.yaml': manifests.crds },
    });
  }
  if (manifests.namespace) {
    folders.push({
      folder: 'namespace',
      about: [
        "The operator's namespace, written because it was asked for (--create-namespace).",
        'Deleting it deletes everything in it, whoever made it.',
      ],
      objects: { 'namespace.yaml': [manifests.namespace] },
    });
  }
  const webhooks = manifests.webhooks ?? [];
  const metrics = manifests.metrics ?? [];
  const certificates = [...webhooks, ...metrics].filter((object) => object.apiVersion.startsWith('cert-manager.io/'));
  const monitors = metrics.filter((object) => object.apiVersion.startsWith('monitoring.coreos.com/'));
  folders.push({
    folder: 'operator',
    about: [
      `The operator's own objects: ServiceAccount, RBAC, Deployment${metrics.length ? ', its metrics Service' : ''}${
        webhooks.length ? ', its webhooks' : ''
      }.`,
      'Deleting them leaves the CRDs, the custom resources and the namespace in place.',
      ...(certificates.length ? ['certificates.yaml needs cert-manager in the cluster.'] : []),
      ...(monitors.length ? ["monitor.yaml needs the Prometheus Operator's CRDs in the cluster."] : []),
    ],
    objects: {
      'rbac.yaml': manifests.rbac,
      'deployment.yaml': manifests.deployment,
      'metrics.yaml': metrics.filter((object) => !monitors.includes(object) && !certificates.includes(object)),
      'monitor.yaml': monitors,
      'webhooks.yaml': webhooks.filter((object) => !certificates.includes(object)),
      'certificates.yaml': certificates,
    },
  });
  const policies = manifests.networkPolicies ?? [];
  const [metricsPolicy, webhookPolicy] = ['metrics', 'webhook'].map((port) =>
    policies.filter((policy) => policy.metadata.labels?.[COMPONENT] === port),
  );
  if (policies.length) {
    // Apart from the operator: a cluster whose network plugin enforces policies and whose
    // Prometheus runs in a namespace not labelled yet can leave this folder out, as
    // kubebuilder leaves its config/network-policy out of config/default.
    folders.push({
      folder: 'network-policy',
      about: [
        "NetworkPolicies for the operator's pods: once applied, they accept only what these allow,",
        "and traffic from their own node (the kubelet's probes).",
        ...(metricsPolicy!.length
          ? ["/metrics: from pods in namespaces labelled metrics=enabled (and the --metrics-reader ones')."]
          : []),
        ...(webhookPolicy!.length
          ? [
              'Webhooks: from anywhere, to the webhook port only. The API server calls them from a',
              'control-plane node or a tunnel, not from a pod: no selector can name it.',
            ]
          : []),
      ],
      objects: { 'allow-metrics-traffic.yaml': metricsPolicy!, 'allow-webhook-traffic.yaml': webhookPolicy! },
    });
  }
  if (manifests.members?.length) {
    folders.push({
      folder: 'members',
      about: [
        "For each member cluster of the fleet (apply it there, not in the operator's cluster): the",
        "operator's namespace and ServiceAccount, a token Secret, and a ClusterRole with what its",
        "controllers need there. The kubeconfig Secret in the operator's cluster carries that token.",
      ],
      objects: { 'member-rbac.yaml': manifests.members },
    });
  }
  return folders;
}
