// values.schema.json of the chart `nestor manifests --helm` writes: Helm checks the values
// against it on install, upgrade, template and lint, so a misspelt key (`replica: 3`) or a
// wrong type fails with the path and the reason instead of being ignored.
import { GENERATED_NOTICE } from '@nestor/operator/manifests';

/** Which optional sections values.yaml has (what the module leaves to the values). */
export interface ValuesSections {
  leaderElection: boolean;
  metrics: boolean;
  monitor: boolean;
  admission: boolean;
}

const toggle = (description: string) => ({
  type: 'object',
  additionalProperties: false,
  required: ['enable'],
  properties: { enable: { type: 'boolean', description } },
});

const quantity = { type: ['string', 'number'] };

export function valuesSchema(sections: ValuesSections): string {
  const schema = {
    $schema: 'https://json-schema.org/draft-07/schema#',
    $comment: GENERATED_NOTICE,
    type: 'object',
    additionalProperties: false,
    properties: {
      // Given to every chart when this one is a subchart.
      global: { type: 'object' },
      image: {
        type: 'object',
        additionalProperties: false,
        required: ['repository'],
        properties: {
          repository: { type: 'string', minLength: 1 },
          tag: { type: ['string', 'number'] },
          digest: { type: 'string' },
          pullPolicy: { enum: ['Always', 'IfNotPresent', 'Never'] },
        },
      },
      replicas: { type: 'integer', minimum: 0 },
      resources: {
        type: 'object',
        additionalProperties: false,
        properties: {
          requests: { type: 'object', additionalProperties: quantity },
          limits: { type: 'object', additionalProperties: quantity },
          claims: { type: 'array' },
        },
      },
      ...(sections.leaderElection ? { leaderElection: toggle('LEADER_ELECT') } : {}),
      ...(sections.metrics ? { metrics: toggle('/metrics, its Service and RBAC') } : {}),
      ...(sections.monitor ? { prometheus: toggle('the ServiceMonitor') } : {}),
      ...(sections.admission ? { webhook: toggle('the admission webhook configurations') } : {}),
      crd: {
        type: 'object',
        additionalProperties: false,
        properties: { enable: { type: 'boolean' }, keep: { type: 'boolean' } },
      },
      networkPolicy: toggle('the NetworkPolicies'),
      podAnnotations: { type: 'object', additionalProperties: { type: 'string' } },
      nodeSelector: { type: 'object', additionalProperties: { type: 'string' } },
      tolerations: { type: 'array', items: { type: 'object' } },
      affinity: { type: 'object' },
    },
  };
  return `${JSON.stringify(schema, null, 2)}\n`;
}
