/** The part of ObjectMeta the runtime reads. Objects are plain decoded JSON, never class instances. */
export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  deletionTimestamp?: string | Date;
  creationTimestamp?: string | Date;
  ownerReferences?: OwnerReference[];
  managedFields?: unknown[];
}

/** A reference from an object to its owner (metadata.ownerReferences): garbage collection and `Owns` follow it. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/**
 * Any Kubernetes object as it comes off the wire. No index signature, so client-node's
 * model types (V1Deployment, ...) and plain classes are KubeObjects as they are.
 */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/**
 * The metadata without managedFields, as a new object (its fields, not copies of them).
 * Deleting a property from the middle of an object turns it into a dictionary, and the
 * API server's JSON of a custom resource has managedFields between labels and name (its
 * keys sorted): such a metadata then takes about 600 bytes of heap against 224 for the
 * copy. (Protobuf lists and watches skip managedFields on the wire.)
 */
export function withoutManagedFields<M extends ObjectMeta>(metadata: M): M {
  const { managedFields: _dropped, ...rest } = metadata;
  return rest as M;
}
