import type { KubeObject } from './kube-object.js';

/** What a reconcile is asked to bring to its desired state: a namespaced or cluster-scoped name. */
export interface ObjectRef {
  namespace?: string;
  name: string;
}

/** The work-queue key of a request: `namespace/name`, or `name` for cluster-scoped objects. */
export function keyOf(ref: ObjectRef): string {
  return ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
}

/** The request a key stands for (inverse of keyOf). */
export function refOf(key: string): ObjectRef {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** The reference of an object: its namespace (if any) and name. */
export function refOfObject(object: KubeObject): ObjectRef {
  const { name = '', namespace } = object.metadata ?? {};
  return namespace ? { namespace, name } : { name };
}
