// Cluster API's Cluster CRD (clusters.cluster.x-k8s.io), cut down for the fleet's tests: the
// v1beta1 version only, with what ClusterApiClusters reads (the status fields that say
// whether the control plane is initialized) and the rest of spec and status kept unchecked.
// Shaped after config/crd/bases/cluster.x-k8s.io_clusters.yaml of kubernetes-sigs/cluster-api.

const condition = {
  type: 'object',
  required: ['type', 'status'],
  properties: {
    type: { type: 'string' },
    status: { type: 'string' },
    severity: { type: 'string' },
    reason: { type: 'string' },
    message: { type: 'string' },
    lastTransitionTime: { type: 'string', format: 'date-time' },
  },
};

export const CLUSTER_API_CLUSTER_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'clusters.cluster.x-k8s.io' },
  spec: {
    group: 'cluster.x-k8s.io',
    scope: 'Namespaced',
    names: { plural: 'clusters', singular: 'cluster', kind: 'Cluster', listKind: 'ClusterList', shortNames: ['cl'] },
    versions: [
      {
        name: 'v1beta1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              apiVersion: { type: 'string' },
              kind: { type: 'string' },
              metadata: { type: 'object' },
              spec: {
                type: 'object',
                'x-kubernetes-preserve-unknown-fields': true,
                properties: {
                  paused: { type: 'boolean' },
                  controlPlaneEndpoint: {
                    type: 'object',
                    required: ['host', 'port'],
                    properties: { host: { type: 'string' }, port: { type: 'integer', format: 'int32' } },
                  },
                },
              },
              status: {
                type: 'object',
                'x-kubernetes-preserve-unknown-fields': true,
                properties: {
                  phase: { type: 'string' },
                  infrastructureReady: { type: 'boolean' },
                  controlPlaneReady: { type: 'boolean' },
                  observedGeneration: { type: 'integer', format: 'int64' },
                  conditions: { type: 'array', items: condition },
                  v1beta2: {
                    type: 'object',
                    properties: { conditions: { type: 'array', items: condition } },
                  },
                },
              },
            },
          },
        },
      },
    ],
  },
};
