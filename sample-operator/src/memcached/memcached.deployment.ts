// The Deployment a Memcached wants: a pure function of the custom resource, server-side
// applied by the controller (which adds the owner reference).
import type { DeploymentObject } from '../kube-types.js';
import type { Memcached } from './memcached.resource.js';

/** The image the Go tutorial uses; MEMCACHED_IMAGE overrides it, as there. */
export const DEFAULT_MEMCACHED_IMAGE = 'memcached:1.6.26-alpine3.19';

/** The labels of a Memcached's pods, also its Deployment's selector. */
export function labelsFor(memcached: Memcached): Record<string, string> {
  return {
    'app.kubernetes.io/name': 'memcached',
    'app.kubernetes.io/instance': memcached.metadata.name!,
    'app.kubernetes.io/managed-by': 'sample-operator',
  };
}

export function deploymentFor(memcached: Memcached, image = DEFAULT_MEMCACHED_IMAGE): DeploymentObject {
  const { name, namespace } = memcached.metadata;
  const labels = labelsFor(memcached);
  const port = memcached.spec.containerPort ?? 11211;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels },
    spec: {
      replicas: memcached.spec.size,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: 'memcached',
              image,
              imagePullPolicy: 'IfNotPresent',
              command: ['memcached', `--port=${port}`, '--memory-limit=64', '-o', 'modern', '-v'],
              ports: [{ name: 'memcached', containerPort: port, protocol: 'TCP' }],
              securityContext: {
                runAsNonRoot: true,
                runAsUser: 1001,
                allowPrivilegeEscalation: false,
                capabilities: { drop: ['ALL'] },
              },
            },
          ],
        },
      },
    },
  };
}
