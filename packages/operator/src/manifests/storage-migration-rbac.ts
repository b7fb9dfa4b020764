// The rights of the leader's storage-version migration (upgrades/): the operator's own CRDs
// by name, never CRDs at large, and never the CRD objects themselves (which would let it
// change their schema or conversion webhook): only their status, where storedVersions is.
// Its Events about a CRD (cluster-scoped) go to `default`: the controllers' rights cover
// them when cluster-wide; an operator whose rights are namespaced records none (dropped,
// counted), its log and metrics tell the same.
import type { GeneratedCustomResourceDefinition } from '../crd/crd-generator.js';
import type { PolicyRule } from './rbac.js';

/** What the migration needs of a CRD: its name, group and plural. */
export type MigratedCustomResourceDefinition = Pick<GeneratedCustomResourceDefinition, 'metadata'> & {
  spec: Pick<GeneratedCustomResourceDefinition['spec'], 'group'> & { names: { plural: string } };
};

/**
 * For a ClusterRole: get, list and watch on the CRDs by name (the migration watches each
 * with a `metadata.name` field selector, which RBAC matches with `resourceNames`), patch on
 * their status (the trim of storedVersions), and list and patch on each kind in every
 * namespace (every object is rewritten, wherever the controllers watch).
 */
export function storageMigrationRules(crds: readonly MigratedCustomResourceDefinition[]): PolicyRule[] {
  if (crds.length === 0) return [];
  const names = crds.map((crd) => crd.metadata.name).sort();
  const byGroup = new Map<string, Set<string>>();
  for (const crd of crds) {
    const plurals = byGroup.get(crd.spec.group) ?? new Set<string>();
    byGroup.set(crd.spec.group, plurals.add(crd.spec.names.plural));
  }
  return [
    {
      apiGroups: ['apiextensions.k8s.io'],
      resources: ['customresourcedefinitions'],
      resourceNames: names,
      verbs: ['get', 'list', 'watch'],
    },
    {
      apiGroups: ['apiextensions.k8s.io'],
      resources: ['customresourcedefinitions/status'],
      resourceNames: names,
      verbs: ['patch'],
    },
    ...[...byGroup.keys()].sort().map((group) => ({
      apiGroups: [group],
      resources: [...byGroup.get(group)!].sort(),
      verbs: ['list', 'patch'],
    })),
  ];
}
