// What a CacheCluster wants: pure functions of the custom resource, server-side applied by
// the controller (which adds the owner references). The pods mount the ConfigMap, and the
// hash of its contents is an annotation of their template: a change to the configuration
// changes the template, and the StatefulSet controller rolls the pods one by one.
import { createHash } from 'node:crypto';
import { quantityToNumber, type V1ConfigMap, type V1Service, type V1StatefulSet } from '@nestor/operator';
import type { CacheCluster } from './cache-cluster.resource.js';

export const CACHE_PORT = 6379;
export const CONFIG_HASH_ANNOTATION = 'cache.example.com/config-hash';
const CONFIG_FILE = 'redis.conf';

/** The labels of a cluster's pods, also its StatefulSet's and Service's selector. */
export function labelsFor(cluster: CacheCluster): Record<string, string> {
  return {
    'app.kubernetes.io/name': 'cache',
    'app.kubernetes.io/instance': cluster.metadata.name!,
    'app.kubernetes.io/managed-by': 'cache-cluster-operator',
  };
}

export const configMapName = (cluster: CacheCluster) => `${cluster.metadata.name}-config`;

/**
 * The cache's configuration file. `save` comes from the backups ConfigMap (redis' snapshot
 * rule, e.g. "900 1": every 15 minutes if a key changed); without one, no snapshots.
 */
export function configMapFor(cluster: CacheCluster, save?: string): V1ConfigMap {
  const config = [
    `port ${CACHE_PORT}`,
    `maxmemory ${Math.floor(quantityToNumber(cluster.spec.maxMemory))}`,
    `maxmemory-policy ${cluster.spec.evictionPolicy}`,
    `save "${save ?? ''}"`,
    'dir /data',
    '',
  ].join('\n');
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: configMapName(cluster), namespace: cluster.metadata.namespace, labels: labelsFor(cluster) },
    data: { [CONFIG_FILE]: config },
  };
}

/** A short, stable hash of a ConfigMap's data: the same data, the same hash. */
export function configHash(configMap: V1ConfigMap): string {
  const data = configMap.data ?? {};
  const canonical = JSON.stringify(
    Object.keys(data)
      .sort()
      .map((key) => [key, data[key]]),
  );
  return createHash('sha256').update(canonical).digest('hex').slice(0, 16);
}

/** The headless Service that gives each pod a stable DNS name: <name>-0.<name>.<namespace>.svc. */
export function serviceFor(cluster: CacheCluster): V1Service {
  const { name, namespace } = cluster.metadata;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, labels: labelsFor(cluster) },
    spec: {
      clusterIP: 'None',
      publishNotReadyAddresses: true,
      selector: labelsFor(cluster),
      ports: [{ name: 'cache', port: CACHE_PORT, targetPort: 'cache' }],
    },
  };
}

export function statefulSetFor(cluster: CacheCluster, configHashValue: string): V1StatefulSet {
  const { name, namespace } = cluster.metadata;
  const labels = labelsFor(cluster);
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace, labels },
    spec: {
      serviceName: name!,
      replicas: cluster.spec.replicas,
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: labels },
      template: {
        metadata: { labels, annotations: { [CONFIG_HASH_ANNOTATION]: configHashValue } },
        spec: {
          securityContext: { runAsNonRoot: true, runAsUser: 999, fsGroup: 999 },
          containers: [
            {
              name: 'cache',
              image: cluster.spec.image,
              args: [`/etc/cache/${CONFIG_FILE}`],
              ports: [{ name: 'cache', containerPort: CACHE_PORT }],
              readinessProbe: { exec: { command: ['redis-cli', 'ping'] }, periodSeconds: 5 },
              volumeMounts: [
                { name: 'data', mountPath: '/data' },
                { name: 'config', mountPath: '/etc/cache' },
              ],
            },
          ],
          volumes: [{ name: 'config', configMap: { name: configMapName(cluster) } }],
        },
      },
      // One PersistentVolumeClaim per pod, made by the StatefulSet controller. Kubernetes
      // refuses changes to these templates: the webhook refuses changes to spec.storage.
      volumeClaimTemplates: [
        {
          metadata: { name: 'data' },
          spec: {
            accessModes: ['ReadWriteOnce'],
            resources: { requests: { storage: String(cluster.spec.storage) } },
          },
        },
      ],
    },
  };
}

/** Where clients connect: the Service's DNS name. */
export function endpointOf(cluster: CacheCluster): string {
  return `${cluster.metadata.name}.${cluster.metadata.namespace}.svc:${CACHE_PORT}`;
}
