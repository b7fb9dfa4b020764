import { operatorLabels, type Manifest } from './manifest.js';
import { leaderElectionRules, rbacRulesFor, type ControllerAccess, type PolicyRule } from './rbac.js';
import { accessIn, namespacedWatches, watchedNamespaces } from './watched-namespace.js';

export interface OperatorRbacOptions {
  name: string;
  namespace: string;
  controllers: readonly ControllerAccess[];
  /** The namespace the module watches (its `namespace` option, `WATCH_NAMESPACE`); default all. */
  watchNamespace?: string;
  /** The namespace of leader election's Lease, or false without leader election. */
  leaderElection: false | { namespace: string };
  /** Sharded: the leader lists and watches the shard Leases, and takes over those of dead shards. */
  sharding?: boolean;
  /** Rights the fleet's cluster providers need (kubeconfig Secrets), by namespace or cluster-wide. */
  fleet?: ReadonlyArray<{ namespace?: string; rules: PolicyRule[] }>;
  /** The rights of the leader's storage-version migration (storage-migration-rbac.ts), for a ClusterRole of its own. */
  storageMigrationRules?: PolicyRule[];
}

/**
 * The operator's identity and the controllers' rights: a ServiceAccount; when every
 * controller watches named namespaces, a Role in each of them with the rules on the
 * namespaced kinds used there (and Events): a controller's whole set where it reconciles,
 * only its `@Watches` kinds where it merely maps from (the operator's own namespace, for
 * `ownNamespace`), and a ClusterRole only for the cluster-scoped kinds; otherwise one
 * ClusterRole, and a Role `<name>-watches` in each namespace a `@Watches` names for the
 * kind it watches there (not every Secret of the cluster for a mapper of its own
 * namespace's). Leader election's Lease gets a Role in its namespace; the storage-version
 * migration a ClusterRole of its own.
 */
export function operatorRbac(options: OperatorRbacOptions): Manifest[] {
  const { name, namespace } = options;
  const labels = operatorLabels(name);
  const meta = (objectName: string, ns?: string) => ({ name: objectName, ...(ns ? { namespace: ns } : {}), labels });
  const subject = { kind: 'ServiceAccount', name, namespace };
  const rbac: Manifest[] = [{ apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(name, namespace) }];
  const bound = (kind: 'Role' | 'ClusterRole', roleName: string, rules: PolicyRule[], ns?: string) =>
    rbac.push(
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind, metadata: meta(roleName, ns), rules },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: kind === 'Role' ? 'RoleBinding' : 'ClusterRoleBinding',
        metadata: meta(roleName, ns),
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name: roleName },
        subjects: [subject],
      },
    );

  const watched = watchedNamespaces(options.controllers, options.watchNamespace, namespace);
  if (watched) {
    for (const where of watched) {
      const here = accessIn(options.controllers, where, options.watchNamespace, namespace);
      bound('Role', name, rbacRulesFor(here, { scope: 'namespaced' }), where);
    }
    const clusterRules = rbacRulesFor(options.controllers, { scope: 'cluster' });
    if (clusterRules.length) bound('ClusterRole', name, clusterRules);
  } else {
    const { clusterWide, byNamespace } = namespacedWatches(options.controllers, options.watchNamespace, namespace);
    bound('ClusterRole', name, rbacRulesFor(clusterWide));
    for (const where of [...byNamespace.keys()].sort()) {
      bound(
        'Role',
        `${name}-watches`,
        rbacRulesFor(byNamespace.get(where)!, { scope: 'namespaced', events: false }),
        where,
      );
    }
  }
  if (options.leaderElection) {
    bound(
      'Role',
      `${name}-leader-election`,
      leaderElectionRules(options.sharding ? { sharding: true } : {}),
      options.leaderElection.namespace,
    );
  }
  if (options.storageMigrationRules?.length)
    bound('ClusterRole', `${name}-storage-migration`, options.storageMigrationRules);
  (options.fleet ?? []).forEach(({ namespace: where, rules }, i) =>
    bound(where ? 'Role' : 'ClusterRole', `${name}-fleet${i === 0 ? '' : `-${i + 1}`}`, rules, where),
  );
  return rbac;
}
