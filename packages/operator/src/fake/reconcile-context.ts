// A ReconcileContext for calling a @Reconcile() method directly in a unit test.
import { DEFAULT_CLUSTER_NAME, type KubeObject, type ObjectRef } from '@nestor/core';
import type { ReconcileContext } from '../nest/reconcile-context.js';
import { FakeKubeClient } from './fake-kube-client.js';

/** A ReconcileContext whose log lines are kept in `logs` (level and message). */
export type FakeReconcileContext = ReconcileContext & { readonly logs: Array<{ level: string; message: string }> };

let runs = 0;

/**
 * The context the runtime would pass for this object (or ref): attempt 1, a live signal, a
 * recording logger, and `client` (pass the FakeKubeClient your assertions read; default: a new one)
 * in `cluster` (default 'default').
 */
export function reconcileContext(
  target: KubeObject | ObjectRef,
  overrides: Partial<Pick<ReconcileContext, 'attempt' | 'signal' | 'reconcileId' | 'client' | 'cluster'>> = {},
): FakeReconcileContext {
  const ref = 'metadata' in target ? (target.metadata ?? {}) : (target as ObjectRef);
  const request: ObjectRef = ref.namespace ? { namespace: ref.namespace, name: ref.name! } : { name: ref.name! };
  const logs: Array<{ level: string; message: string }> = [];
  const record = (level: string) => (message: unknown) => void logs.push({ level, message: String(message) });
  return {
    request,
    key: request.namespace ? `${request.namespace}/${request.name}` : request.name,
    signal: overrides.signal ?? new AbortController().signal,
    attempt: overrides.attempt ?? 1,
    reconcileId: overrides.reconcileId ?? `fake-${++runs}`,
    client: overrides.client ?? new FakeKubeClient(),
    cluster: overrides.cluster ?? DEFAULT_CLUSTER_NAME,
    log: { log: record('log'), warn: record('warn'), error: record('error'), debug: record('debug') },
    logs,
  };
}
