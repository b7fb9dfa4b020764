// A Memcached's status from its Deployment's: pure functions, so the controller stays short.
//
// The conditions follow the Available / Progressing / Degraded convention of OpenShift's
// ClusterOperators, which the Operator SDK's docs recommend:
//   Available    True while at least one memcached pod is available (the cache serves).
//   Progressing  True while the Deployment has not rolled out the current spec to `size` pods
//                (False while the operator cannot apply it).
//   Degraded     True when the Deployment reports a failure, or the operator could not apply it.
import { StatusConditions, type Condition } from '@nestor/operator';
import type { DeploymentObject } from '../kube-types.js';
import type { Memcached, MemcachedStatus } from './memcached.resource.js';

export type ConditionType = 'Available' | 'Progressing' | 'Degraded';
type Wanted = Pick<Condition, 'status' | 'reason' | 'message'>;

/**
 * The status the Memcached should have, given its Deployment as the API server returned it.
 * `failure` says why the operator could not apply the Deployment.
 */
export function memcachedStatus(
  memcached: Memcached,
  deployment: DeploymentObject | undefined,
  failure?: { reason: string; message: string },
): MemcachedStatus {
  const size = memcached.spec.size;
  const available = deployment?.status?.availableReplicas ?? 0;
  const pending = deployment ? rolloutPending(deployment, size) : 'the Deployment does not exist yet';
  const fault = failure ?? (deployment && deploymentFault(deployment));

  // meta.SetStatusCondition's semantics, with observedGeneration from the Memcached.
  const conditions = new StatusConditions(memcached);
  const set = (type: ConditionType, wanted: Wanted) => conditions.set({ type, ...wanted });
  set(
    'Available',
    available > 0
      ? { status: 'True', reason: 'MinimumReplicasAvailable', message: `${available}/${size} pods available` }
      : { status: 'False', reason: 'NoReplicasAvailable', message: `0/${size} pods available` },
  );
  set(
    'Progressing',
    failure
      ? { status: 'False', reason: failure.reason, message: 'the Deployment cannot be applied (see Degraded)' }
      : pending
        ? { status: 'True', reason: 'RollingOut', message: pending }
        : { status: 'False', reason: 'RolloutComplete', message: `Deployment has ${size}/${size} pods available` },
  );
  set(
    'Degraded',
    fault ? { status: 'True', ...fault } : { status: 'False', reason: 'AsExpected', message: 'no failure reported' },
  );

  return {
    conditions: conditions.list,
    observedGeneration: memcached.metadata.generation ?? 0,
    readyReplicas: deployment?.status?.readyReplicas ?? 0,
  };
}

/** The condition of a type, if set. */
export function conditionOf(memcached: Memcached, type: ConditionType): Condition | undefined {
  return memcached.status?.conditions?.find((c) => c.type === type);
}

/**
 * What the rollout still waits for, or undefined when the Deployment runs the current spec on
 * `size` available pods (the checks of `kubectl rollout status`).
 */
function rolloutPending(deployment: DeploymentObject, size: number): string | undefined {
  const status = deployment.status ?? {};
  const updated = status.updatedReplicas ?? 0;
  const total = status.replicas ?? 0;
  const available = status.availableReplicas ?? 0;
  if ((status.observedGeneration ?? 0) < (deployment.metadata?.generation ?? 0))
    return 'waiting for the Deployment controller to observe the new spec';
  if (updated < size) return `${updated}/${size} pods updated`;
  if (total > updated) return `${total - updated} old pods terminating`;
  if (available < size) return `${available}/${size} pods available`;
  return undefined;
}

/** A failure the Deployment reports: pods it cannot create, or a rollout past its deadline. */
function deploymentFault(deployment: DeploymentObject): { reason: string; message: string } | undefined {
  for (const c of deployment.status?.conditions ?? []) {
    if (c.type === 'ReplicaFailure' && c.status === 'True')
      return { reason: 'ReplicaFailure', message: c.message ?? '' };
    if (c.type === 'Progressing' && c.reason === 'ProgressDeadlineExceeded')
      return { reason: 'ProgressDeadlineExceeded', message: c.message ?? '' };
  }
  return undefined;
}
