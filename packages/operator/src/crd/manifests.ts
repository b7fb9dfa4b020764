import { stringify } from 'yaml';
import { allVersionsOf, getCustomResourceMetadata } from './custom-resource.decorator.js';
import { customResourceDefinitions, type GeneratedCustomResourceDefinition } from './crd-generator.js';
import type { ClassType } from './field.decorator.js';
import { leaderElectionRules, rbacRulesFor, type ControllerAccess } from './rbac.js';
import { metricsAuthRules, metricsReaderRole } from './metrics-auth-rules.js'; // secure /metrics

/** A Kubernetes object to apply. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

export interface OperatorManifestOptions {
  /** The operator's name: of its ServiceAccount, ClusterRole, bindings and Deployment. */
  name: string;
  /** The namespace it runs in. */
  namespace: string;
  /** Its container image. */
  image: string;
  controllers: readonly ControllerAccess[];
  /** More @CustomResource classes to write CRDs for, beyond those the controllers use. */
  customResources?: readonly ClassType[];
  /** A Role for leader election's Lease in the operator's namespace (default true). */
  leaderElection?: boolean;
  replicas?: number;
  /** Port of /metrics (default 8080). */
  metricsPort?: number;
  /** Port of /healthz and /readyz (default 8081). */
  healthPort?: number;
}

/** What `nestor manifests` writes, as objects. */
export interface OperatorManifests {
  crds: GeneratedCustomResourceDefinition[];
  /** Namespace, ServiceAccount, ClusterRole + ClusterRoleBinding, leader-election Role + RoleBinding. */
  rbac: Manifest[];
  deployment: Manifest[];
}

/**
 * The @CustomResource classes the controllers use as their kind, owned or watched kinds,
 * with every other version of those kinds loaded in the process (a CRD lists all versions).
 */
export function customResourcesOf(controllers: readonly ControllerAccess[]): ClassType[] {
  const used = new Set<ClassType>();
  for (const c of controllers) {
    for (const type of [c.resource, ...(c.owns ?? []), ...(c.watches ?? [])]) {
      if (typeof type === 'function' && getCustomResourceMetadata(type)) used.add(type);
    }
  }
  return allVersionsOf([...used]);
}

/** CRDs, least-privilege RBAC and a Deployment for an operator made of these controllers. */
export function operatorManifests(options: OperatorManifestOptions): OperatorManifests {
  const { name, namespace } = options;
  const labels = { 'app.kubernetes.io/name': name, 'app.kubernetes.io/managed-by': 'nestor' };
  const meta = (objectName: string, ns?: string) => ({ name: objectName, ...(ns ? { namespace: ns } : {}), labels });
  const subject = { kind: 'ServiceAccount', name, namespace };
  const leaderElection = options.leaderElection ?? true;

  const classes = allVersionsOf([...customResourcesOf(options.controllers), ...(options.customResources ?? [])]);
  const rbac: Manifest[] = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: meta(namespace) },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(name, namespace) },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: meta(name),
      rules: [...rbacRulesFor(options.controllers), ...metricsAuthRules()], // + reviews for secure /metrics
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: meta(name),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [subject],
    },
  ];
  if (leaderElection) {
    const role = `${name}-leader-election`;
    rbac.push(
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: meta(role, namespace),
        rules: leaderElectionRules(),
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: meta(role, namespace),
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role },
        subjects: [subject],
      },
    );
  }
  rbac.push(metricsReaderRole(`${name}-metrics-reader`, labels)); // secure /metrics: bind it to Prometheus
  return { crds: customResourceDefinitions(classes), rbac, deployment: [deploymentOf(options, labels)] };
}

function deploymentOf(options: OperatorManifestOptions, labels: Record<string, string>): Manifest {
  const metricsPort = options.metricsPort ?? 8080;
  const healthPort = options.healthPort ?? 8081;
  const selector = { 'app.kubernetes.io/name': options.name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: options.name, namespace: options.namespace, labels },
    spec: {
      replicas: options.replicas ?? 1,
      selector: { matchLabels: selector },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: options.name,
          // The shutdown grace (30 s by default) plus time to release the Lease.
          terminationGracePeriodSeconds: 40,
          securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: 'operator',
              image: options.image,
              env: [
                { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                { name: 'NODE_ENV', value: 'production' },
              ],
              ports: [
                { name: 'metrics', containerPort: metricsPort, protocol: 'TCP' },
                { name: 'health', containerPort: healthPort, protocol: 'TCP' },
              ],
              livenessProbe: {
                httpGet: { path: '/healthz', port: 'health' },
                initialDelaySeconds: 15,
                periodSeconds: 20,
              },
              readinessProbe: {
                httpGet: { path: '/readyz', port: 'health' },
                initialDelaySeconds: 5,
                periodSeconds: 10,
              },
              resources: {
                requests: { cpu: '100m', memory: '128Mi' },
                limits: { cpu: '500m', memory: '512Mi' },
              },
              securityContext: {
                // The `node` user of the official Node.js images; any non-root uid works.
                runAsUser: 1000,
                runAsNonRoot: true,
                readOnlyRootFilesystem: true,
                allowPrivilegeEscalation: false,
                capabilities: { drop: ['ALL'] },
              },
              volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
            },
          ],
          volumes: [{ name: 'tmp', emptyDir: {} }],
        },
      },
    },
  };
}

const HEADER = "# Generated by `nestor manifests` from the operator's decorators. Do not edit: generate again.\n";

/**
 * The manifests as YAML files, by file name: crds.yaml, rbac.yaml, deployment.yaml, and a
 * kustomization.yaml listing them (`kubectl apply -k <dir>`); each file also goes alone
 * to `kubectl apply -f`. A file with nothing in it (no CRDs) is left out.
 */
export function manifestFiles(manifests: OperatorManifests): Record<string, string> {
  const files: Record<string, string> = {};
  const parts: Array<[string, readonly object[]]> = [
    ['crds.yaml', manifests.crds],
    ['rbac.yaml', manifests.rbac],
    ['deployment.yaml', manifests.deployment],
  ];
  for (const [file, objects] of parts) if (objects.length) files[file] = yamlDocuments(objects);
  files['kustomization.yaml'] =
    HEADER +
    stringify({ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: Object.keys(files) });
  return files;
}

/** Objects as one multi-document YAML stream. */
export function yamlDocuments(objects: readonly object[]): string {
  return HEADER + objects.map((object) => stringify(object, { lineWidth: 0 })).join('---\n');
}
