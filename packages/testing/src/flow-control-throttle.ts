import { randomBytes } from 'node:crypto';
import { KubeApiError } from '@nestor/core';
import type { ApiClient } from './api-client.js';
import { waitUntil } from './control-plane-readiness.js';

/** Whose requests API Priority and Fairness throttles: a user, or every ServiceAccount of a namespace. */
export type ThrottledSubject = { user: string } | { serviceAccountsOf: string };

/**
 * Makes API Priority and Fairness serve `subject`'s requests to `resources` one at a time
 * and refuse the others with 429 (a FlowSchema and a PriorityLevelConfiguration, taken in
 * by the running server); waits until the server took the FlowSchema in. Returns what
 * deletes both.
 */
export async function throttleByFlowControl(
  client: ApiClient,
  subject: ThrottledSubject,
  resources: Array<{ apiGroup: string; resource: string }>,
  timeoutMs: number,
): Promise<() => Promise<void>> {
  const base = '/apis/flowcontrol.apiserver.k8s.io/v1';
  const name = `nestor-throttle-${randomBytes(4).toString('hex')}`;
  // Shares 0, nothing lent or borrowed: the level's one seat, no queue.
  await client.request('POST', `${base}/prioritylevelconfigurations`, {
    metadata: { name },
    spec: {
      type: 'Limited',
      limited: {
        nominalConcurrencyShares: 0,
        lendablePercent: 0,
        borrowingLimitPercent: 0,
        limitResponse: { type: 'Reject' },
      },
    },
  });
  const subjects =
    'user' in subject
      ? [{ kind: 'User', user: { name: subject.user } }]
      : [{ kind: 'ServiceAccount', serviceAccount: { namespace: subject.serviceAccountsOf, name: '*' } }];
  await client.request('POST', `${base}/flowschemas`, {
    metadata: { name },
    spec: {
      priorityLevelConfiguration: { name },
      // Before every built-in FlowSchema but exempt (1) and probes (2).
      matchingPrecedence: 100,
      distinguisherMethod: { type: 'ByUser' },
      rules: [
        {
          subjects,
          resourceRules: resources.map(({ apiGroup, resource }) => ({
            verbs: ['*'],
            apiGroups: [apiGroup],
            resources: [resource],
            clusterScope: true,
            namespaces: ['*'],
          })),
        },
      ],
    },
  });
  // The API server's flow-control controller marks the FlowSchema once it has taken it in.
  await waitUntil(
    [],
    timeoutMs,
    async () => {
      const schema = await client.request<{ status?: { conditions?: Array<{ type: string }> } }>(
        'GET',
        `${base}/flowschemas/${name}`,
      );
      return schema.status?.conditions?.some((c) => c.type === 'Dangling') === true;
    },
    `the FlowSchema ${name} was not taken in`,
  );
  return async () => {
    for (const kind of ['flowschemas', 'prioritylevelconfigurations']) {
      await client.request('DELETE', `${base}/${kind}/${name}`).catch((error: unknown) => {
        if (!(error instanceof KubeApiError && error.status === 404)) throw error;
      });
    }
  };
}
