import type { ManifestFolder } from './manifest-folders.js';
import { COMPONENT } from './network-policy-manifests.js';
import type { OperatorManifests } from './operator-manifests.js';
import { GENERATED_NOTICE } from './yaml-documents.js';

/** The README.md beside the manifest folders: the order to apply them, and how to uninstall. */
export function installGuide(manifests: OperatorManifests, folders: readonly ManifestFolder[]): string {
  const has = (folder: string) => folders.some((f) => f.folder === folder);
  const namespace =
    manifests.namespace?.metadata.name ??
    [...manifests.rbac, ...manifests.deployment].find((m) => m.metadata.namespace)?.metadata.namespace;
  const ns = namespace ? `\`${namespace}\`` : "the operator's namespace";
  const crds = manifests.crds.map((crd) => `\`${crd.metadata.name}\``).join(', ');

  const install: string[] = [];
  if (has('crds')) {
    install.push(
      `\`kubectl apply -k crds\`: the CustomResourceDefinitions (${crds}). ` +
        'Then `kubectl wait --for=condition=Established -f crds/crds.yaml`.',
    );
  }
  install.push(
    has('namespace')
      ? `\`kubectl apply -k namespace\`: the namespace ${ns}.`
      : `The namespace ${ns} must exist: \`kubectl create namespace ${namespace ?? '<namespace>'}\` ` +
          '(or generate again with `--create-namespace`).',
  );
  const certManager = manifests.webhooks?.some((object) => object.apiVersion.startsWith('cert-manager.io/'));
  if (certManager) {
    install.push(
      'cert-manager must run in the cluster (https://cert-manager.io/docs/installation/): it issues the webhook ' +
        'certificate and puts its CA into the webhook configurations (or generate again with ' +
        '`--webhook-certificates self-managed`, and the operator makes its own).',
    );
  } else if (manifests.metrics?.some((object) => object.apiVersion.startsWith('cert-manager.io/'))) {
    install.push(
      'cert-manager must run in the cluster (https://cert-manager.io/docs/installation/): it issues the metrics ' +
        'certificate (or generate again with `--metrics-certificates self-signed`).',
    );
  }
  const roles = manifests.rbac.filter((m) => m.kind === 'Role' || m.kind === 'RoleBinding');
  const elsewhere = [
    ...new Set(roles.map((m) => m.metadata.namespace).filter((ns): ns is string => !!ns && ns !== namespace)),
  ];
  if (elsewhere.length) {
    install.push(
      `The namespace${elsewhere.length > 1 ? 's' : ''} ${elsewhere.map((ns) => `\`${ns}\``).join(', ')} ` +
        `must exist: the operator has a Role there (where it watches, or where its Lease lives).`,
    );
  }
  const monitor = manifests.metrics?.some((object) => object.kind === 'ServiceMonitor');
  if (monitor) {
    install.push(
      "The Prometheus Operator's CRDs must be in the cluster for `monitor.yaml`'s ServiceMonitor " +
        '(or generate again without `--service-monitor`).',
    );
  }
  install.push(
    `\`kubectl apply -k operator\`: its ServiceAccount, RBAC, Deployment${
      manifests.metrics?.length ? ', metrics Service' : ''
    }${manifests.webhooks?.length ? ', its webhook Service and configurations' : ''}.`,
  );
  const opened = (manifests.networkPolicies ?? []).map((policy) => policy.metadata.labels?.[COMPONENT]);
  if (has('network-policy')) {
    const accepted = [
      ...(opened.includes('metrics') ? ['/metrics from namespaces labelled `metrics=enabled`'] : []),
      ...(opened.includes('webhook') ? ['the webhook port from anywhere (the API server calls it)'] : []),
      "anything from their own node (the kubelet's probes)",
    ];
    install.push(
      "`kubectl apply -k network-policy`: NetworkPolicies, after which the operator's pods accept only " +
        `${accepted.slice(0, -1).join(', ')} and ${accepted.at(-1)!}, where the network plugin enforces ` +
        'NetworkPolicies.' +
        (opened.includes('metrics')
          ? ' Label the namespace Prometheus runs in (`kubectl label namespace <namespace> metrics=enabled`), ' +
            'or leave this step out.'
          : ''),
    );
  }
  const reader = manifests.rbac.find((m) => m.kind === 'ClusterRole' && m.metadata.name.endsWith('-metrics-reader'));
  const service = manifests.metrics?.find((m) => m.kind === 'Service');
  const readers = manifests.rbac.filter(
    (m) => m.kind === 'ClusterRoleBinding' && (m.roleRef as { name?: string }).name === reader?.metadata.name,
  );
  const scraping =
    reader && service
      ? `

## Scraping /metrics

\`${service.metadata.name}\` serves /metrics over HTTPS, only to callers whose bearer token the
API server accepts and whose user may \`get /metrics\`: bind Prometheus' ServiceAccount to the
ClusterRole \`${reader.metadata.name}\`${
          readers.length
            ? ` (done for ${readers
                .flatMap((b) =>
                  (b.subjects as { namespace: string; name: string }[]).map((s) => `\`${s.namespace}/${s.name}\``),
                )
                .join(', ')})`
            : ` (\`kubectl create clusterrolebinding ${reader.metadata.name} --clusterrole ${reader.metadata.name} --serviceaccount <namespace>:<name>\`, or generate again with \`--metrics-reader <namespace>/<name>\`)`
        }. A request without a token gets 401, one whose user may not gets 403.${
          opened.includes('metrics')
            ? `
With \`network-policy\` applied, Prometheus' namespace must be labelled \`metrics=enabled\`
(\`kubectl label namespace <namespace> metrics=enabled\`)${readers.length ? ' or be the namespace of a ServiceAccount bound above' : ''}.`
            : ''
        }
`
      : '';

  const uninstall = [
    'Delete the custom resources you want cleaned up while the operator still runs, so its finalizers do their work.',
    '`kubectl delete -k operator`: the operator alone. The CRDs, every custom resource and the namespace stay. ' +
      "An object that still carries one of the operator's finalizers cannot go while the operator is not running: " +
      'start it again, or remove the finalizer from its `metadata.finalizers` by hand (`kubectl edit`), ' +
      'which skips its cleanup.',
  ];
  if (has('network-policy')) {
    uninstall.push('`kubectl delete -k network-policy`: the NetworkPolicies, with or after the operator.');
  }
  if (has('crds')) {
    uninstall.push(
      '`kubectl delete -k crds`: only if you mean to delete every custom resource of these kinds, in every ' +
        "namespace. Objects with the operator's finalizer hold the deletion until their finalizers are removed.",
    );
  }
  if (has('namespace')) {
    uninstall.push(
      `\`kubectl delete -k namespace\`: only if nothing else lives in ${ns}: it deletes everything in it.`,
    );
  }

  const list = (items: string[]) => items.map((item, i) => `${i + 1}. ${item}`).join('\n');
  const members = has('members')
    ? `
## Member clusters (a fleet)

In each member cluster, not the operator's: \`kubectl --context <member> apply -k members\`
(the operator's namespace and ServiceAccount there, a token Secret and a ClusterRole with what
its controllers need). Then, in the operator's cluster, the member's kubeconfig Secret with
that token inline (docs/multicluster.md).
`
    : '';
  return `<!-- ${GENERATED_NOTICE} -->

# Deploying the operator

Each folder is a kustomization, applied and deleted on its own: deleting the operator
never deletes the CRDs (and with them every custom resource) or the namespace.

## Install, in this order (from this folder)

${list(install)}

## Uninstall

${list(uninstall)}
${members}${scraping}`;
}
