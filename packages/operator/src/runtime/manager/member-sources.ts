import type { KubeObject } from '@nestor/core';
import type { ManagedControllerOptions } from '../controller/managed-controller.js';
import { selectsLocal } from '../controller/cluster-selection.js';
import type { ClusterFleet } from './manager-options.js';

/**
 * A controller's watches of member clusters as sources of requests (the fleet holds their
 * informers); its watches of the manager's own cluster stay watches. Unchanged without any.
 */
export function withMemberWatches<T extends KubeObject>(
  options: ManagedControllerOptions<T>,
  fleet: ClusterFleet | undefined,
  localCluster: string,
): ManagedControllerOptions<T> {
  const watches = options.watches ?? [];
  const members = watches.filter((w) => w.clusters !== undefined && w.clusters !== 'local');
  if (members.length === 0) return options;
  if (!fleet) {
    throw new Error(
      `controller ${options.name} watches ${members.map((w) => w.resource.kind).join(', ')} in member clusters, ` +
        'but the manager has no fleet: make one (new Fleet(manager, { providers })) before adding it',
    );
  }
  return {
    ...options,
    watches: watches.filter((w) => selectsLocal(w.clusters, localCluster)),
    sources: [...(options.sources ?? []), ...members.map((w) => fleet.watch(w))],
  };
}
