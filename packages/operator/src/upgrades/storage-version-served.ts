// Whether the API server stores a kind in the version the CRD names as storage. It rebuilds
// a kind's storage after the CRD changes, asynchronously (each API server of a cluster on
// its own), while the change is visible at once: a migration started on the CRD's word
// could write objects in the old version and trim storedVersions over them. Discovery says
// which version the answering server stores, as kube-storage-version-migrator reads it:
// `storageVersionHash`, the first 8 bytes of sha256("<group>/<version>/<kind>"), base64.
import { createHash } from 'node:crypto';
import { sleep, type Transport } from '@nestor/core';
import type { StorageMigrationPlan } from './stored-versions.js';

/** Discovery's storageVersionHash of a kind stored as `version`. */
export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256').update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString('base64');
}

interface ResourceList {
  resources?: Array<{ name: string; storageVersionHash?: string }>;
}

/**
 * Resolves once discovery (at the version the migration goes through) says the kind is
 * stored as the plan's storage version, asking every `intervalMs`; throws after
 * `timeoutMs`. A server whose discovery has no storageVersionHash is taken at its CRD's word.
 */
export async function untilStoredAs(
  transport: Pick<Transport, 'json'>,
  plan: StorageMigrationPlan,
  options: {
    signal?: AbortSignal;
    timeoutMs?: number;
    intervalMs?: number;
    wait?: (ms: number, signal?: AbortSignal) => Promise<void>;
  } = {},
): Promise<void> {
  const { group, version, kind, plural } = plan.resource;
  const expected = storageVersionHash(group, plan.storage, kind);
  const wait = options.wait ?? sleep;
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    const list = await transport.json<ResourceList>('GET', `/apis/${group}/${version}`, {
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const hash = list.resources?.find((resource) => resource.name === plural)?.storageVersionHash;
    if (hash === undefined || hash === expected) return;
    if (Date.now() >= deadline) {
      throw new Error(
        `the API server does not store ${plan.crd} as ${plan.storage} yet (its discovery's storageVersionHash is ` +
          `${hash}, not ${expected}): the CRD's change has not reached it; try again later`,
      );
    }
    await wait(options.intervalMs ?? 1000, options.signal);
    if (options.signal?.aborted) throw options.signal.reason;
  }
}
