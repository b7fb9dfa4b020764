/**
 * Which objects of a kind: a namespace and the label and field selectors, filtered by the
 * API server on LIST and WATCH. Every option that picks objects (a list, a watch, an
 * informer, a controller and its sources, the sharded kinds) takes this one shape.
 */
export interface ObjectSelector {
  /** Only objects in this namespace (default: all; a cluster-scoped kind ignores it). */
  namespace?: string;
  /** Only objects whose labels match, e.g. `app=web,tier!=cache`. */
  labelSelector?: string;
  /**
   * Only objects whose fields match, e.g. `metadata.name=config`, `spec.nodeName=node-1`;
   * custom resources support `metadata.name`, `metadata.namespace` and their CRD's
   * `selectableFields`.
   */
  fieldSelector?: string;
}
