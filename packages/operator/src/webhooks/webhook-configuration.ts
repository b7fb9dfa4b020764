// The Validating/MutatingWebhookConfiguration entries (admissionregistration.k8s.io/v1) for
// a webhook class, and the path it is served on. Pure: the Nest layer reads the decorators,
// @nestor/testing points the result at a local URL, `nestor manifests` will write it.
import type { ResourceDescriptor } from '@nestor/core';
import type { AdmissionOperation } from './admission-review.js';

/** controller-runtime's path for every kind's conversions, the one the CRDs name. */
export const CONVERSION_PATH = '/convert';

export type WebhookType = 'validating' | 'mutating';

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}

export interface MatchCondition {
  /** Unique among the webhook's conditions. */
  name: string;
  /** CEL over object, oldObject, request and authorizer; false skips the webhook. */
  expression: string;
}

/** What a user of controller-runtime's markers or kopf's decorators sets; defaults as the API server's. */
export interface WebhookOptions {
  /** The webhook's name in its configuration (default derived from the path, e.g. `validate-apps-v1-deployment.nestor.dev`). */
  name?: string;
  /** Operations sent (default: those a handler exists for; CREATE and UPDATE for defaulting). */
  operations?: AdmissionOperation[];
  /** 'Fail' (default) rejects the request when the webhook cannot be called; 'Ignore' admits it. */
  failurePolicy?: 'Fail' | 'Ignore';
  /** 'None' (default) or 'NoneOnDryRun' (the handler skips its side effects when context.dryRun). */
  sideEffects?: 'None' | 'NoneOnDryRun';
  /** 1 to 30 seconds (default 10). */
  timeoutSeconds?: number;
  /** Only objects in namespaces with these labels (every namespace has `kubernetes.io/metadata.name`). */
  namespaceSelector?: LabelSelector;
  /** Only objects with these labels (old or new). Users can relabel to dodge it: keep it for opt-in. */
  objectSelector?: LabelSelector;
  /** Up to 64 CEL conditions, all of which must hold for the webhook to be called. */
  matchConditions?: MatchCondition[];
  /** 'Equivalent' (default) also sends requests made at other versions of the kind, converted. */
  matchPolicy?: 'Exact' | 'Equivalent';
  /** Defaulting only: 'IfNeeded' calls it again after later mutations (the handler must be idempotent). */
  reinvocationPolicy?: 'Never' | 'IfNeeded';
}

/** One kind's webhook of one type, as the configuration builder needs it. */
export interface WebhookEntry {
  type: WebhookType;
  resource: ResourceDescriptor;
  operations: AdmissionOperation[];
  options: WebhookOptions;
}

export interface WebhookClientConfig {
  url?: string;
  service?: { namespace: string; name: string; path?: string; port?: number };
  caBundle?: string;
}

export interface WebhookConfiguration {
  apiVersion: 'admissionregistration.k8s.io/v1';
  kind: 'ValidatingWebhookConfiguration' | 'MutatingWebhookConfiguration';
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  webhooks: Record<string, unknown>[];
}

/**
 * controller-runtime's paths: `/validate-<group with dots as dashes>-<version>-<lowercase kind>`
 * and `/mutate-…` (the core group is empty: `/validate--v1-pod`).
 */
export function webhookPath(
  type: WebhookType,
  resource: Pick<ResourceDescriptor, 'group' | 'version' | 'kind'>,
): string {
  const prefix = type === 'validating' ? 'validate' : 'mutate';
  return `/${prefix}-${resource.group.replace(/\./g, '-')}-${resource.version}-${resource.kind.toLowerCase()}`;
}

export interface WebhookConfigurationOptions {
  /**
   * Name of both configurations (default 'nestor-webhooks'); entries are named per kind.
   * With self-managed certificates, `webhooks.selfManaged.configurationName` (or
   * `WEBHOOK_CONFIGURATION_NAME`) must be this name: it is the configuration whose caBundle
   * the operator patches.
   */
  name?: string;
  /**
   * The Service in front of the operator's webhook port (as kubebuilder's webhook-service).
   * Default `webhook-service` in the namespace `system`, kubebuilder's names before its
   * kustomize prefix: `nestor manifests` writes the real one; give it here when applying
   * the result yourself. `TestEnvironment.installWebhooks` replaces it with a local URL.
   */
  service?: { namespace: string; name: string; port?: number };
  /**
   * Where the API server calls the webhook server instead of a Service: its base URL
   * (`https://host:port`, HTTPS only), each webhook's path appended. For an operator run on
   * this machine against a cluster or a shared test control plane (with self-managed
   * certificates, list the host in `selfManaged.hosts`). Not with `service`.
   */
  url?: string;
  /**
   * For every webhook that sets none of its own in `@Webhook`: only objects in namespaces
   * with these labels (`{ matchLabels: { 'kubernetes.io/metadata.name': ns } }` for one).
   * On a shared cluster or test control plane, keeps other namespaces' requests away.
   */
  namespaceSelector?: LabelSelector;
}

/** The two configurations for these entries (one is omitted when it would be empty). */
export function webhookConfigurations(
  entries: readonly WebhookEntry[],
  options: WebhookConfigurationOptions = {},
): WebhookConfiguration[] {
  const name = options.name ?? 'nestor-webhooks';
  if (options.url !== undefined && options.service !== undefined) {
    throw new Error('webhook configurations: give either url or service, not both');
  }
  const target: Target =
    options.url !== undefined
      ? { url: baseUrl(options.url) }
      : {
          service: options.service ?? { namespace: 'system', name: 'webhook-service' },
        };
  const configurations: WebhookConfiguration[] = [];
  for (const type of ['validating', 'mutating'] as const) {
    const webhooks = entries
      .filter((e) => e.type === type)
      .map((e) => webhookEntry(e, target, options.namespaceSelector));
    if (webhooks.length === 0) continue;
    configurations.push({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: type === 'validating' ? 'ValidatingWebhookConfiguration' : 'MutatingWebhookConfiguration',
      metadata: { name },
      webhooks,
    });
  }
  return configurations;
}

type Target = { url: string } | { service: NonNullable<WebhookConfigurationOptions['service']> };

/** The base URL without a trailing slash; refused unless HTTPS without query or fragment, as the API server does. */
function baseUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`webhook configurations: url ${JSON.stringify(url)} is not a URL: give https://<host>:<port>`);
  }
  if (parsed.protocol !== 'https:' || parsed.search || parsed.hash || parsed.username || parsed.password) {
    throw new Error(
      `webhook configurations: url ${JSON.stringify(url)} must be https://<host>:<port>[/<prefix>], without a query, fragment or user (the API server calls webhooks over TLS only)`,
    );
  }
  return url.replace(/\/+$/, '');
}

function webhookEntry(entry: WebhookEntry, target: Target, namespaceSelector: LabelSelector | undefined) {
  const { resource, options } = entry;
  const path = webhookPath(entry.type, resource);
  if (options.timeoutSeconds !== undefined && !(options.timeoutSeconds >= 1 && options.timeoutSeconds <= 30)) {
    throw new Error(`webhook ${path}: timeoutSeconds must be 1 to 30, not ${options.timeoutSeconds}`);
  }
  return {
    // A webhook name must be a fully qualified domain name; the path makes it unique.
    name: options.name ?? `${path.slice(1).replace(/--/g, '-')}.nestor.dev`,
    admissionReviewVersions: ['v1'],
    clientConfig:
      'url' in target
        ? { url: `${target.url}${path}` }
        : { service: { ...target.service, path, ...(target.service.port ? { port: target.service.port } : {}) } },
    rules: [
      {
        apiGroups: [resource.group],
        apiVersions: [resource.version],
        resources: [resource.plural],
        operations: entry.operations,
        scope: resource.namespaced ? 'Namespaced' : 'Cluster',
      },
    ],
    failurePolicy: options.failurePolicy ?? 'Fail',
    sideEffects: options.sideEffects ?? 'None',
    timeoutSeconds: options.timeoutSeconds ?? 10,
    matchPolicy: options.matchPolicy ?? 'Equivalent',
    ...((options.namespaceSelector ?? namespaceSelector)
      ? { namespaceSelector: options.namespaceSelector ?? namespaceSelector }
      : {}),
    ...(options.objectSelector ? { objectSelector: options.objectSelector } : {}),
    ...(options.matchConditions?.length ? { matchConditions: options.matchConditions } : {}),
    ...(entry.type === 'mutating' ? { reinvocationPolicy: options.reinvocationPolicy ?? 'Never' } : {}),
  };
}
