// What an operator with webhooks needs beyond its Deployment, after kubebuilder's
// config/webhook, config/certmanager and config/default: a Service in front of port 9443,
// the Validating/MutatingWebhookConfigurations pointing at it, and a certificate, either
// from cert-manager (a self-signed Issuer and a Certificate whose Secret the Deployment
// mounts; cainjector fills the caBundles from the `inject-ca-from` annotation) or made by
// the operator itself (self-managed: RBAC on its Secret and on what it patches).
import { DEFAULT_WEBHOOK_CERT_DIR } from '@nestor/core';
import type { GeneratedCustomResourceDefinition } from '../crd/crd-generator.js';
import { hasWebhookConversion } from './crd-conversion.js';
import { operatorLabels, type Manifest } from './manifest.js';
import type { PolicyRule } from './rbac.js';

/**
 * Where the webhook server's certificate comes from: cert-manager, the operator itself
 * (self-managed), or OLM, which makes it, mounts it and fills the caBundles for a bundle's
 * `webhookdefinitions` (`nestor manifests --olm`).
 */
export type WebhookCertificates = 'cert-manager' | 'self-managed' | 'olm';

/** Where OLM mounts a webhook certificate it made, as tls.crt and tls.key: controller-runtime's default. */
export const OLM_WEBHOOK_CERT_DIR = DEFAULT_WEBHOOK_CERT_DIR;

/** A Validating or MutatingWebhookConfiguration, as webhookConfigurationsOf writes it. */
export interface WebhookConfigurationManifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  webhooks: unknown[];
}

/** What cert-manager's cainjector reads on a webhook configuration or a CRD. */
export const INJECT_CA_FROM = 'cert-manager.io/inject-ca-from';
export const WEBHOOK_PORT = 9443;

export interface WebhookManifestOptions {
  /**
   * The Validating and MutatingWebhookConfigurations (webhookConfigurationsOf the app's
   * `@Webhook` classes, named `webhookNames(name).configuration`, pointing at its Service).
   */
  configurations: readonly WebhookConfigurationManifest[];
  /** Default 'cert-manager', as kubebuilder. */
  certificates?: WebhookCertificates;
  /**
   * What the module's `webhooks` options fix, which the operator follows whatever the
   * Deployment's variables say: the objects must say the same (default: 9443, the
   * certificate in DEFAULT_WEBHOOK_CERT_DIR as tls.crt and tls.key, webhookNames).
   */
  server?: WebhookServerSettings;
}

/** The webhook server as the operator will run it, for the objects that must agree with it. */
export interface WebhookServerSettings {
  /** The port it listens on: the container's `webhook-server` port, the Service's target. */
  port?: number;
  /** Where it reads the certificate (cert-manager: where the Secret is mounted), and the files' names. */
  certDir?: string;
  certName?: string;
  keyName?: string;
  /** The self-managed Secret, the Service the certificate names, and the configurations it patches. */
  secretName?: string;
  serviceName?: string;
  configurationName?: string;
}

/** The names kubebuilder gives these objects, with the operator's name as its namePrefix. */
export function webhookNames(name: string) {
  return {
    service: `${name}-webhook-service`,
    secret: `${name}-webhook-server-cert`,
    certificate: `${name}-serving-cert`,
    issuer: `${name}-selfsigned-issuer`,
    /** Both configurations: one name, as webhookConfigurationsOf writes them. */
    configuration: `${name}-webhooks`,
    /** Self-managed: the Role on its Secret and the ClusterRole on what it patches. */
    certificateRole: `${name}-webhook-certificate`,
    caInjectorRole: `${name}-webhook-ca-injector`,
  };
}

export interface WebhookManifests {
  /** Service, configurations, and (cert-manager) Issuer and Certificate. */
  webhooks: Manifest[];
  certificates: Manifest[];
  /** Self-managed: a Role on the Secret, a ClusterRole on the configurations and CRDs, and their bindings. */
  rbac: Manifest[];
  /** The CRDs, those converting through a webhook annotated for cainjector (cert-manager). */
  crds: GeneratedCustomResourceDefinition[];
  /** The Deployment exposing the webhook port, with the Secret mounted (cert-manager) or the names in its environment (self-managed). */
  deployment: Manifest;
}

export function webhookManifests(
  operator: { name: string; namespace: string; service?: { name: string; port?: number } },
  crds: readonly GeneratedCustomResourceDefinition[],
  deployment: Manifest,
  options: WebhookManifestOptions,
): WebhookManifests {
  const { name, namespace } = operator;
  const names = webhookNames(name);
  const labels = operatorLabels(name);
  const mode = options.certificates ?? 'cert-manager';
  const server = options.server ?? {};
  if (server.secretName) names.secret = server.secretName;
  if (server.serviceName) names.service = server.serviceName;
  if (server.configurationName) names.configuration = server.configurationName;
  if (operator.service) {
    // The operator's certificate names its Service: another one would fail every TLS handshake.
    if (server.serviceName && operator.service.name !== server.serviceName)
      throw new Error(
        `the webhook Service is ${operator.service.name}, but the operator's certificate names ${server.serviceName} ` +
          `(webhooks.selfManaged.serviceName): give both the same name`,
      );
    names.service = operator.service.name;
  }
  const port = server.port ?? WEBHOOK_PORT;
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new Error(
      `the webhook server's port is ${port} (webhooks.port), but the operator has webhooks or conversions to serve: ` +
        'give webhooks.port 1-65535, or leave it out for 9443',
    );
  for (const configuration of options.configurations) {
    // The operator patches the caBundle of this name only (self-managed), and RBAC grants it.
    if (configuration.metadata.name !== names.configuration)
      throw new Error(
        `the ${configuration.kind} is named ${configuration.metadata.name}, but the operator's webhook configuration ` +
          `name is ${names.configuration}: give webhookConfigurationsOf the name of webhooks.selfManaged.configurationName`,
      );
  }
  if (
    mode === 'olm' &&
    ((server.certDir ?? OLM_WEBHOOK_CERT_DIR) !== OLM_WEBHOOK_CERT_DIR ||
      (server.certName ?? 'tls.crt') !== 'tls.crt' ||
      (server.keyName ?? 'tls.key') !== 'tls.key')
  )
    throw new Error(
      `OLM mounts the webhook certificate at ${OLM_WEBHOOK_CERT_DIR} as tls.crt and tls.key, but the module's ` +
        `webhooks options read ${server.certDir ?? OLM_WEBHOOK_CERT_DIR}/${server.certName ?? 'tls.crt'} and ` +
        `${server.keyName ?? 'tls.key'}: leave webhooks.certDir, certName and keyName out of OperatorModule.forRoot()`,
    );
  const converted = crds.filter(hasWebhookConversion).map((crd) => crd.metadata.name);
  const injectFrom = { [INJECT_CA_FROM]: `${namespace}/${names.certificate}` };
  const annotate = <T extends { metadata: { annotations?: Record<string, string> } }>(object: T): T =>
    mode === 'cert-manager'
      ? { ...object, metadata: { ...object.metadata, annotations: { ...object.metadata.annotations, ...injectFrom } } }
      : object;

  const service: Manifest = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: names.service, namespace, labels },
    spec: {
      selector: { 'app.kubernetes.io/name': name },
      ports: [{ name: 'webhook', port: operator.service?.port ?? 443, targetPort: 'webhook-server', protocol: 'TCP' }],
    },
  };
  const configurations = options.configurations.map((configuration): Manifest =>
    annotate({ ...configuration, metadata: { ...configuration.metadata, labels } }),
  );

  const certificates: Manifest[] =
    mode === 'cert-manager'
      ? [
          {
            apiVersion: 'cert-manager.io/v1',
            kind: 'Issuer',
            metadata: { name: names.issuer, namespace, labels },
            spec: { selfSigned: {} },
          },
          {
            apiVersion: 'cert-manager.io/v1',
            kind: 'Certificate',
            metadata: { name: names.certificate, namespace, labels },
            spec: {
              dnsNames: [`${names.service}.${namespace}.svc`, `${names.service}.${namespace}.svc.cluster.local`],
              issuerRef: { kind: 'Issuer', name: names.issuer },
              secretName: names.secret,
            },
          },
        ]
      : [];

  return {
    webhooks: [service, ...configurations],
    certificates,
    rbac:
      mode === 'self-managed'
        ? selfManagedRbac(operator, names, configurations.map((c) => c.kind).sort(), converted)
        : [],
    crds: crds.map((crd) => (hasWebhookConversion(crd) ? annotate(crd) : crd)),
    deployment: webhookDeployment(deployment, mode, names, converted, { ...server, port }),
  };
}

/**
 * Least privilege for a self-managed certificate. Kubernetes cannot limit `create` by name
 * (the name is not known when it is authorized), so creating Secrets is granted in the
 * operator's namespace; reading and updating them only for its own.
 */
function selfManagedRbac(
  operator: { name: string; namespace: string },
  names: ReturnType<typeof webhookNames>,
  configurationKinds: string[],
  crds: string[],
): Manifest[] {
  const labels = operatorLabels(operator.name);
  const subject = { kind: 'ServiceAccount', name: operator.name, namespace: operator.namespace };
  const secretRules: (PolicyRule & { resourceNames?: string[] })[] = [
    { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
    { apiGroups: [''], resources: ['secrets'], resourceNames: [names.secret], verbs: ['get', 'update'] },
  ];
  const patchRules: (PolicyRule & { resourceNames?: string[] })[] = [
    ...(configurationKinds.length
      ? [
          {
            apiGroups: ['admissionregistration.k8s.io'],
            resources: configurationKinds.map((kind) => `${kind.toLowerCase()}s`),
            resourceNames: [names.configuration],
            verbs: ['get', 'patch'],
          },
        ]
      : []),
    ...(crds.length
      ? [
          {
            apiGroups: ['apiextensions.k8s.io'],
            resources: ['customresourcedefinitions'],
            resourceNames: [...crds].sort(),
            verbs: ['get', 'patch'],
          },
        ]
      : []),
  ];
  return [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: names.certificateRole, namespace: operator.namespace, labels },
      rules: secretRules,
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: names.certificateRole, namespace: operator.namespace, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: names.certificateRole },
      subjects: [subject],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: names.caInjectorRole, labels },
      rules: patchRules,
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: names.caInjectorRole, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: names.caInjectorRole },
      subjects: [subject],
    },
  ];
}

interface Container {
  env?: { name: string; value?: string }[];
  ports?: { name: string; containerPort: number; protocol: string }[];
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}

interface PodSpec {
  containers: Container[];
  volumes?: Record<string, unknown>[];
}

/**
 * The Deployment, its container given the webhook port and the certificate (a copy; the
 * input is unchanged). OLM adds the certificate's volume to the Deployment itself.
 */
function webhookDeployment(
  deployment: Manifest,
  mode: WebhookCertificates,
  names: ReturnType<typeof webhookNames>,
  crds: string[],
  server: WebhookServerSettings & { port: number },
): Manifest {
  const copy = structuredClone(deployment) as Manifest & { spec: { template: { spec: PodSpec } } };
  const pod = copy.spec.template.spec;
  const container = pod.containers[0]!;
  container.ports = [
    ...(container.ports ?? []),
    { name: 'webhook-server', containerPort: server.port, protocol: 'TCP' },
  ];
  if (mode === 'cert-manager') {
    container.volumeMounts = [
      ...(container.volumeMounts ?? []),
      { name: 'webhook-certs', mountPath: server.certDir ?? DEFAULT_WEBHOOK_CERT_DIR, readOnly: true },
    ];
    // cert-manager's Secret holds tls.crt and tls.key: other file names the module reads are projected.
    const renamed = (server.certName ?? 'tls.crt') !== 'tls.crt' || (server.keyName ?? 'tls.key') !== 'tls.key';
    const items = [
      { key: 'tls.crt', path: server.certName ?? 'tls.crt' },
      { key: 'tls.key', path: server.keyName ?? 'tls.key' },
    ];
    pod.volumes = [
      ...(pod.volumes ?? []),
      { name: 'webhook-certs', secret: { secretName: names.secret, ...(renamed ? { items } : {}) } },
    ];
  } else if (mode === 'self-managed') {
    container.env = [
      ...(container.env ?? []),
      { name: 'WEBHOOK_CERTIFICATES', value: 'self-managed' },
      { name: 'WEBHOOK_SECRET_NAME', value: names.secret },
      { name: 'WEBHOOK_SERVICE_NAME', value: names.service },
      { name: 'WEBHOOK_CONFIGURATION_NAME', value: names.configuration },
      ...(crds.length ? [{ name: 'WEBHOOK_CONVERSION_CRDS', value: [...crds].sort().join(',') }] : []),
    ];
  }
  return copy;
}
