// client-node's models declare metav1.Time and MicroTime fields `Date`: its own client turns
// the API server's strings into Dates. Nestor decodes JSON as it is (no per-object walk to
// convert), so those fields are the RFC 3339 strings the API server sent, and the types say so.

/**
 * A @kubernetes/client-node model as it is on the wire, and so in every object Nestor
 * returns: its `Date` fields (creationTimestamp, a Job's completionTime, a Lease's renewTime)
 * are the RFC 3339 strings the API server sends (`Date.parse(t)` reads one). The models
 * @nestor/operator re-exports (`V1Job`, `V1ObjectMeta`, ...) are already these; name any other
 * through it: `Wire<k8s.V2HorizontalPodAutoscaler>` (`Wire` is on `@nestor/operator/runtime`, which
 * keeps the root entry under its 250 names).
 */
export type Wire<T> = T extends Date
  ? string
  : T extends readonly (infer Item)[]
    ? Wire<Item>[]
    : T extends object
      ? { [K in keyof T]: Wire<T[K]> }
      : T;
