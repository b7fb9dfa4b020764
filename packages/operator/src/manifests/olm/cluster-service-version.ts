// The ClusterServiceVersion: what OLM installs the operator from, made of the same objects
// as the kustomize folders and the chart, and of what only the author can say (names,
// maintainers, icon, capability level, version, channels), olm.yaml beside the project.
import { hasWebhookConversion } from '../crd-conversion.js';
import type { Manifest } from '../manifest.js';
import type { OperatorManifests } from '../operator-manifests.js';
import { OPERATOR_VARIABLES } from '../operator-settings.js';
import { WEBHOOK_PORT } from '../webhook-manifests.js';
import { ownedCrdDescriptions, type OlmKindDescription } from './crd-descriptors.js';
import { installStrategy } from './install-strategy.js';
import { webhookDefinitions } from './webhook-definitions.js';

/** OperatorHub's capability levels, lowest first. */
export const OLM_CAPABILITIES = [
  'Basic Install',
  'Seamless Upgrades',
  'Full Lifecycle',
  'Deep Insights',
  'Auto Pilot',
] as const;

/** What the author gives for a bundle (olm.yaml), checked and with the icon read. */
export interface OlmBundleMetadata {
  /** The OLM package: the bundle's `package`, the CSV's name prefix. */
  packageName: string;
  /** The operator's release, semver without a `v`: the CSV is `<packageName>.v<version>`. */
  version: string;
  displayName: string;
  /** The long description (Markdown) OperatorHub shows. */
  description: string;
  /** One line, for OperatorHub's tiles (the CSV's `description` annotation). */
  summary?: string;
  provider: { name: string; url?: string };
  maintainers: ReadonlyArray<{ name: string; email: string }>;
  icon: { base64data: string; mediatype: string };
  capabilities: (typeof OLM_CAPABILITIES)[number];
  /** The channels this release is in; the first is the default unless defaultChannel says. */
  channels: readonly string[];
  defaultChannel?: string;
  /** The oldest Kubernetes release the operator runs on, e.g. 1.31.0. */
  minKubeVersion: string;
  /** How the console names and describes each kind, by kind. */
  kinds: Readonly<Record<string, OlmKindDescription>>;
  categories?: readonly string[];
  keywords?: readonly string[];
  links?: ReadonlyArray<{ name: string; url: string }>;
  maturity?: string;
  /** The CSV this one upgrades (`<packageName>.v<previous>`). */
  replaces?: string;
  /** The releases this one upgrades directly (`olm.skipRange`), e.g. `>=1.0.0 <1.2.0`. */
  skipRange?: string;
  /** An example object of each kind, for the console's create form (`alm-examples`). */
  examples?: readonly object[];
  /** Where the source is (the `repository` annotation). */
  repository?: string;
}

export interface ClusterServiceVersionOptions {
  name: string;
  namespace: string;
  image: string;
  /**
   * The operator watches the one namespace OLM's OperatorGroup targets (OwnNamespace and
   * SingleNamespace install modes, WATCH_NAMESPACE from `olm.targetNamespaces`); else every
   * namespace (AllNamespaces).
   */
  watchNamespace?: string;
}

/**
 * The CSV, and the objects the bundle carries beside it and the CRDs. `manifests` must be
 * generated with the webhook certificates `'olm'`: OLM makes the webhook Service and
 * certificate, and the configurations become the CSV's webhookdefinitions.
 */
export function clusterServiceVersion(
  manifests: OperatorManifests,
  metadata: OlmBundleMetadata,
  options: ClusterServiceVersionOptions,
): { csv: Manifest; objects: Manifest[] } {
  const webhookObjects = manifests.webhooks ?? [];
  const configurations = webhookObjects.filter((object) => object.kind.endsWith('WebhookConfiguration'));
  const converted = manifests.crds.some(hasWebhookConversion);
  if (options.watchNamespace && converted)
    throw new Error(
      'a CRD converts through the operator, and OLM installs such an operator only in AllNamespaces mode: ' +
        'drop --watch-namespace for the OLM bundle',
    );
  const deployments = manifests.deployment.map((deployment) => underOlm(deployment, options));
  const { install, objects } = installStrategy(
    {
      name: options.name,
      namespace: options.namespace,
      ...(options.watchNamespace ? { watchNamespace: options.watchNamespace } : {}),
    },
    deployments,
    manifests.rbac,
  );
  const webhooks = webhookDefinitions(
    { name: options.name, webhookPort: webhookPortOf(manifests.deployment[0]) },
    configurations,
    manifests.crds,
  );
  const one = !!options.watchNamespace;
  const csv: Manifest = {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: {
      name: `${metadata.packageName}.v${metadata.version}`,
      annotations: {
        capabilities: metadata.capabilities,
        ...(metadata.categories?.length ? { categories: metadata.categories.join(',') } : {}),
        containerImage: options.image,
        ...(metadata.summary ? { description: metadata.summary } : {}),
        'operatorframework.io/suggested-namespace': options.namespace,
        ...(metadata.repository ? { repository: metadata.repository } : {}),
        ...(metadata.skipRange ? { 'olm.skipRange': metadata.skipRange } : {}),
        ...(metadata.examples?.length ? { 'alm-examples': JSON.stringify(metadata.examples, null, 2) } : {}),
      },
    },
    spec: {
      displayName: metadata.displayName,
      description: metadata.description,
      version: metadata.version,
      ...(metadata.maturity ? { maturity: metadata.maturity } : {}),
      ...(metadata.replaces ? { replaces: metadata.replaces } : {}),
      minKubeVersion: metadata.minKubeVersion,
      provider: metadata.provider,
      maintainers: metadata.maintainers,
      ...(metadata.links?.length ? { links: metadata.links } : {}),
      ...(metadata.keywords?.length ? { keywords: metadata.keywords } : {}),
      icon: [metadata.icon],
      installModes: [
        { type: 'OwnNamespace', supported: one },
        { type: 'SingleNamespace', supported: one },
        { type: 'MultiNamespace', supported: false },
        { type: 'AllNamespaces', supported: !one },
      ],
      install,
      customresourcedefinitions: { owned: ownedCrdDescriptions(manifests.crds, metadata.kinds) },
      ...(webhooks.length ? { webhookdefinitions: webhooks } : {}),
      relatedImages: [{ name: 'operator', image: options.image }],
    },
  };
  const others = [
    ...objects,
    ...(manifests.metrics ?? []),
    ...webhookObjects.filter((object) => !configurations.includes(object) && object.kind !== 'Service'),
  ];
  return { csv, objects: others };
}

/** The container's webhook port (9443 unless the module moved it). */
function webhookPortOf(deployment: Manifest | undefined): number {
  const containers = (
    deployment?.spec as {
      template?: { spec?: { containers?: Array<{ ports?: Array<{ name: string; containerPort: number }> }> } };
    }
  )?.template?.spec?.containers;
  return containers?.[0]?.ports?.find((port) => port.name === 'webhook-server')?.containerPort ?? WEBHOOK_PORT;
}

/**
 * The Deployment as OLM runs it, in the namespace its OperatorGroup is in: the variables that
 * name the operator's namespace (leader election's) read it from the pod, and WATCH_NAMESPACE,
 * when it watches one, from the annotation OLM sets on its pods, the OperatorGroup's target.
 */
function underOlm(deployment: Manifest, options: ClusterServiceVersionOptions): Manifest {
  const copy = structuredClone(deployment) as Manifest & {
    spec: { template: { spec: { containers: Array<{ env?: Array<Record<string, unknown>> }> } } };
  };
  const from = (fieldPath: string) => ({ valueFrom: { fieldRef: { fieldPath } } });
  for (const container of copy.spec.template.spec.containers) {
    container.env = (container.env ?? []).map((variable) => {
      if (variable.name === OPERATOR_VARIABLES.watchNamespace && options.watchNamespace)
        return { name: variable.name, ...from("metadata.annotations['olm.targetNamespaces']") };
      if (variable.value === options.namespace) return { name: variable.name, ...from('metadata.namespace') };
      return variable;
    });
  }
  return copy;
}
