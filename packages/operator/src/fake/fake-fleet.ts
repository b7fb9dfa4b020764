// A Fleet for unit tests of cluster-aware reconcilers: named clusters, each a client (a
// FakeKubeClient your assertions read), engaged or failed as the test says.
import { DEFAULT_CLUSTER_NAME } from '@nestor/core';
import type { Observable } from 'rxjs';
// By module, as runtime/rx.ts takes RxJS: the package's index loads all of it.
import { NEVER } from 'rxjs/internal/observable/never';
import type { KubeClient } from '../client/kube-client.js';
import type { Cluster } from '../runtime/manager/cluster.js';
import type { Engagement } from '../runtime/fleet/engagement.js';
import type { Fleet, MemberStatus } from '../runtime/fleet/fleet.js';
import { FakeKubeClient } from './fake-kube-client.js';

export interface FakeFleetOptions {
  /** The engaged member clusters by name, each with its client (default: none). */
  members?: Readonly<Record<string, KubeClient>>;
  /** The operator's own cluster's client (default: a new FakeKubeClient), named 'default'. */
  local?: KubeClient;
  /** Members named but not engaged, with why (a failed engagement, as `status()` reports it). */
  failed?: Readonly<Record<string, string>>;
  /** What `engagements$` tells (default: nothing): a Subject the test drives, say. */
  engagements?: Observable<Engagement>;
}

/**
 * A Fleet whose clusters are the clients given: `names`, `get(name)` (`.name` and `.client`
 * only), `client(name)` and `status()` answer as the real one would with those members
 * engaged, and `engagements$` tells what `options.engagements` does. Inject it where the controller takes a Fleet:
 *
 * ```ts
 * const east = new FakeKubeClient();
 * const census = new Census(fakeFleet({ members: { east } }));
 * ```
 */
export function fakeFleet(options: FakeFleetOptions = {}): Fleet {
  const local = options.local ?? new FakeKubeClient();
  const members = new Map(Object.entries(options.members ?? {}));
  const failed = Object.entries(options.failed ?? {});
  const clusterOf = (name: string): Pick<Cluster, 'name' | 'client'> | undefined => {
    const client = name === DEFAULT_CLUSTER_NAME ? local : members.get(name);
    return client ? { name, client } : undefined;
  };
  const fleet = {
    get names(): string[] {
      return [DEFAULT_CLUSTER_NAME, ...members.keys()];
    },
    get: clusterOf,
    client: (name: string) => clusterOf(name)?.client,
    status: (): MemberStatus[] => [
      ...[...members.keys()].map((name) => ({ name, phase: 'engaged' as const, attempts: 1, since: 0, held: false })),
      ...failed.map(([name, error]) => ({ name, phase: 'failed' as const, error, attempts: 1, since: 0, held: false })),
    ],
    engagements$: options.engagements ?? NEVER,
  };
  // The methods a reconciler calls; the manager's hooks (@internal) are not there.
  return fleet as unknown as Fleet;
}
