import { operatorLabels, type Manifest } from './manifest.js';
import {
  METRICS_CERT_DIR,
  operatorEnvironment,
  resolveOperatorSettings,
  terminationGracePeriodSeconds,
  type OperatorSettings,
} from './operator-settings.js';

export interface OperatorDeploymentOptions extends OperatorSettings {
  /** The operator's name: of its ServiceAccount, ClusterRole, bindings and Deployment. */
  name: string;
  /** The namespace it runs in. */
  namespace: string;
  /** Its container image. */
  image: string;
  replicas?: number;
}

/**
 * V8 sized for an operator (NODE_OPTIONS of the Deployment). On a large machine V8 lets the
 * young generation grow to 2 x 64 MB to absorb allocation bursts, and RSS keeps it. An
 * operator's allocations are short-lived (a request, an event), so 2 x 4 MB costs no CPU
 * we could measure and keeps 20-50 MB of RSS off the pod (docs/BENCHMARKS.md, "Memory").
 * `--expose-gc` lets the manager give back, once idle, what start-up, a LIST or a burst grew
 * (HeapRelease): 6-17 MB of an idle operator's RSS.
 */
export const OPERATOR_NODE_OPTIONS = '--max-semi-space-size=4 --expose-gc';

/**
 * The operator's Deployment: runs as its ServiceAccount, probed on its health port, limited
 * and locked down; its environment sets the ports, namespace and leader election the
 * other objects expect (operator-settings.ts), and its grace period covers the shutdown's.
 */
export function operatorDeployment(options: OperatorDeploymentOptions): Manifest {
  const labels = operatorLabels(options.name);
  const settings = resolveOperatorSettings(options, options);
  const { metrics, healthPort } = settings;
  const selector = { 'app.kubernetes.io/name': options.name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: options.name, namespace: options.namespace, labels },
    spec: {
      replicas: options.replicas ?? options.shardReplicas ?? 1,
      selector: { matchLabels: selector },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: options.name,
          terminationGracePeriodSeconds: terminationGracePeriodSeconds(settings.shutdownGraceMs),
          securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: 'operator',
              image: options.image,
              env: [
                { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                { name: 'NODE_ENV', value: 'production' },
                { name: 'NODE_OPTIONS', value: OPERATOR_NODE_OPTIONS },
                ...operatorEnvironment(settings),
              ],
              ports: [
                ...(metrics ? [{ name: 'metrics', containerPort: metrics.port, protocol: 'TCP' }] : []),
                ...(healthPort ? [{ name: 'health', containerPort: healthPort, protocol: 'TCP' }] : []),
              ],
              ...(healthPort
                ? {
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
                  }
                : {}),
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
              volumeMounts: [
                { name: 'tmp', mountPath: '/tmp' },
                ...(metrics?.certificateSecret
                  ? [{ name: 'metrics-certs', mountPath: METRICS_CERT_DIR, readOnly: true }]
                  : []),
              ],
            },
          ],
          volumes: [
            { name: 'tmp', emptyDir: {} },
            ...(metrics?.certificateSecret
              ? [{ name: 'metrics-certs', secret: { secretName: metrics.certificateSecret } }]
              : []),
          ],
        },
      },
    },
  };
}
