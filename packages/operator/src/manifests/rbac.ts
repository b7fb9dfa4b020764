import type { ControllerResources } from '../crd/controller-resources.js';
import { resourceOf, type ResourceType } from '../crd/custom-resource.decorator.js';

/** What one controller touches: its kind, the kinds it owns, writes, reads and watches, whether it has a finalizer. */
export interface ControllerAccess extends ControllerResources {
  /** Kinds it writes without owning them (declared with `@Controller`'s `writes`). */
  writes?: readonly ResourceType[];
  /** Kinds it only reads through KubeClient (declared with `@Controller`'s `reads`). */
  reads?: readonly ResourceType[];
  /** The one namespace it watches (`@Controller`'s `namespace`); absent: the module's. */
  namespace?: string;
  /** The namespaces it watches (`@Controller`'s `namespaces`), instead of `namespace`. */
  namespaces?: readonly string[];
  /** The namespace(s) each `@Watches` names, in the order of `watches` (absent or undefined: the module's). */
  watchNamespaces?: readonly (WatchNamespaces | undefined)[];
  /** The controller has a `@Finalizer` method. */
  finalizer?: boolean;
}

/**
 * Where a `@Watches` looks: a namespace, a list of them, the operator's own namespace
 * (`ownNamespace`: the one the manifests deploy it to), or a namespace a function gives at
 * start-up, which the manifests cannot know (its rights are then cluster-wide).
 */
export type WatchNamespaces = string | readonly string[] | { operatorNamespace: true } | { atStartUp: true };

/** An rbac.authorization.k8s.io/v1 PolicyRule. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  /** Only these objects (get, update, patch, delete; list and watch with a `metadata.name` field selector). */
  resourceNames?: string[];
  verbs: string[];
}

/** The verbs the framework uses on each kind a controller touches, and nothing more. */
const VERBS = {
  /** Watched through an informer, read from its cache; finalizers are merge-patched in. */
  primary: ['get', 'list', 'watch', 'update', 'patch'],
  /** patchStatus, applyStatus, or a PUT of the status. */
  status: ['get', 'update', 'patch'],
  /**
   * The OwnerReferencesPermissionEnforcement admission plugin (on in OpenShift and many
   * hardened clusters) lets a client set blockOwnerDeletion, as KubeClient.apply({ owner })
   * does, only if it may update the owner's finalizers subresource; so does a @Finalizer.
   */
  finalizers: ['update'],
  /** Created, applied, replaced, patched and deleted by the reconciler; watched to reconcile the owner. */
  owned: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  /** Read and written by the reconciler through KubeClient, not owned. */
  written: ['get', 'list', 'create', 'update', 'patch', 'delete'],
  /** Only watched, to map changes to requests. */
  watched: ['get', 'list', 'watch'],
  /** Only read through KubeClient: get and list, and watch for an informer to serve them. */
  read: ['get', 'list', 'watch'],
  /**
   * The Event recorder creates events.k8s.io/v1 Events (core/v1 where that group is not
   * served) and patches a repeated one's series or count.
   */
  events: ['create', 'patch'],
  /** Leader election on a coordination.k8s.io Lease. */
  leases: ['get', 'create', 'update'],
  /**
   * Sharding: the assigner watches the ring's shard Leases (its takeovers and releases are
   * updates) and deletes those released long ago.
   */
  shardLeases: ['list', 'watch', 'delete'],
} as const;

export interface RbacRulesOptions {
  /** Rules for the Event recorder (default true). */
  events?: boolean;
  /**
   * Only the rules on namespaced kinds (Events included), for a Role, or only those on
   * cluster-scoped kinds, for a ClusterRole (default: all of them).
   */
  scope?: 'namespaced' | 'cluster';
}

/**
 * The least-privilege rules for a set of controllers: exactly the verbs the framework uses
 * on each kind (see VERBS), merged per kind, then grouped into one rule per API group and
 * verb set, sorted, so the output is stable.
 */
export function rbacRulesFor(controllers: readonly ControllerAccess[], options: RbacRulesOptions = {}): PolicyRule[] {
  const grants = new Grants();
  const grant = (type: ResourceType, verbs: readonly string[], subresource?: string) => {
    const { group, plural, namespaced } = resourceOf(type);
    if (options.scope && (options.scope === 'namespaced') !== namespaced) return;
    grants.add(group, subresource ? `${plural}/${subresource}` : plural, verbs);
  };
  for (const controller of controllers) {
    if (controller.resource) {
      grant(controller.resource, VERBS.primary);
      grant(controller.resource, VERBS.status, 'status');
      if (controller.finalizer || controller.owns?.length) grant(controller.resource, VERBS.finalizers, 'finalizers');
    }
    for (const owned of controller.owns ?? []) grant(owned, VERBS.owned);
    for (const written of controller.writes ?? []) grant(written, VERBS.written);
    for (const read of controller.reads ?? []) grant(read, VERBS.read);
    for (const watched of controller.watches ?? []) grant(watched, VERBS.watched);
  }
  if ((options.events ?? true) && options.scope !== 'cluster') {
    grants.add('events.k8s.io', 'events', VERBS.events);
    grants.add('', 'events', VERBS.events);
  }
  return grants.rules();
}

/** The rules leader election needs, for a Role in the namespace its Lease lives in. */
export function leaderElectionRules(options: { sharding?: boolean } = {}): PolicyRule[] {
  const verbs = options.sharding ? [...VERBS.leases, ...VERBS.shardLeases] : VERBS.leases;
  return [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: [...verbs].sort() }];
}

class Grants {
  private readonly byGroup = new Map<string, Map<string, Set<string>>>();

  add(group: string, resource: string, verbs: readonly string[]): void {
    let resources = this.byGroup.get(group);
    if (!resources) this.byGroup.set(group, (resources = new Map()));
    let set = resources.get(resource);
    if (!set) resources.set(resource, (set = new Set()));
    for (const verb of verbs) set.add(verb);
  }

  rules(): PolicyRule[] {
    const rules: PolicyRule[] = [];
    for (const group of [...this.byGroup.keys()].sort()) {
      const byVerbs = new Map<string, string[]>();
      for (const [resource, verbs] of this.byGroup.get(group)!) {
        const key = [...verbs].sort().join(',');
        byVerbs.set(key, [...(byVerbs.get(key) ?? []), resource]);
      }
      const groupRules = [...byVerbs].map(([verbs, resources]) => ({
        apiGroups: [group],
        resources: resources.sort(),
        verbs: verbs.split(','),
      }));
      rules.push(...groupRules.sort((a, b) => a.resources[0]!.localeCompare(b.resources[0]!)));
    }
    return rules;
  }
}
