// One CRD's storage-version migration, start to end: every object rewritten in the storage
// version, then `status.storedVersions` trimmed to it, so that the old versions may be
// removed from the CRD. The operator's leader runs it (storage-migrations.ts), and so does
// `nestor migrate-storage` for a Job.
//
// Restartable rather than resumable: no progress is kept anywhere. A rewrite is idempotent,
// and one of an object already stored in the storage version is a no-op for the API server
// (no etcd write, no watch event) that costs no write token (write-pacer.ts), so a run
// started again after a restart walks what was done at the speed of its requests. Keeping a
// continue token would need a place to write it: an annotation on the CRD needs `patch` on
// the CRD itself, which may change its schema or conversion webhook; the status subresource
// (all a migration needs) cannot hold annotations.
import {
  KubeApiError,
  listPages,
  METADATA_LIST_ACCEPT,
  resourcePath,
  type KubeObject,
  type RuntimeLogger,
  silentLogger,
  type Transport,
} from '@nestor/core';
import { CustomResourceDefinition } from '../client/kinds.js';
import { rewriteObject, type RewriteOutcome } from './object-rewrite.js';
import {
  storageMigrationPlan,
  trimStoredVersionsPatch,
  whyNotTrim,
  type CustomResourceDefinitionObject,
  type StorageMigrationPlan,
} from './stored-versions.js';
import { untilStoredAs } from './storage-version-served.js';
import { WritePacer } from './write-pacer.js';

/** Writes per second of a migration unless told otherwise (see docs/upgrades.md for what it costs). */
export const DEFAULT_MIGRATION_WRITES_PER_SECOND = 100;
/** Rewrites in flight at once unless told otherwise. */
export const DEFAULT_MIGRATION_CONCURRENCY = 8;

/** How fast a migration goes. */
export interface StorageMigrationOptions {
  /**
   * Objects written per second at most (default 100): the API server's and etcd's load, and
   * the watch events every watcher of the kind gets. Objects already stored in the storage
   * version cost nothing of it. `Infinity`: as fast as `concurrency` allows.
   */
  writesPerSecond?: number;
  /** Rewrites in flight at once (default 8). */
  concurrency?: number;
  /** Objects per LIST page (default 500). */
  pageSize?: number;
}

export interface MigrateStorageVersionOptions extends StorageMigrationOptions {
  /** Stops the migration: it throws the abort's reason (storedVersions untouched). */
  signal?: AbortSignal;
  /** Where the start, progress (every `progressLogMs`) and end are logged. */
  logger?: RuntimeLogger;
  /** Progress lines at most this often (default 10 s). */
  progressLogMs?: number;
  /** Told after each page of objects. */
  onProgress?: (progress: MigrationProgress) => void;
  /** Asked before each write; throws when this process must not write (the leader Lease's fence). */
  assertWritable?: () => void;
  /**
   * How long to wait for the API server to store the kind as the CRD says (its discovery's
   * storageVersionHash) before giving up, writing nothing (default 60 s).
   */
  storedAsTimeoutMs?: number;
  /** How waits are slept (tests). */
  wait?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** Objects visited so far, by what became of them. */
export interface MigrationCounts {
  /** Written, and so stored in the storage version. */
  rewritten: number;
  /** Stored in the storage version already: the server wrote nothing. */
  current: number;
  /** Deleted since they were listed. */
  gone: number;
  /** Refused (the current schema, an admission webhook) or still failing after retries. */
  failed: number;
}

export interface MigrationProgress extends MigrationCounts {
  /** The CRD, `<plural>.<group>`. */
  crd: string;
  /** The storage version every object is rewritten in. */
  storage: string;
  /** The other versions `storedVersions` listed when the migration started. */
  from: string[];
  /** Objects still to visit, as the API server counts them, when it says (pages of a list without selectors). */
  remaining?: number;
  seconds: number;
}

/**
 * - `migrated`: every object rewritten, `storedVersions` is the storage version alone.
 * - `current`: `storedVersions` listed the storage version alone already: nothing done.
 * - `incomplete`: some objects could not be rewritten (`failures`): `storedVersions` kept.
 * - `superseded`: the CRD's storage version changed, or another version was stored, during
 *   the run (`detail`): `storedVersions` kept; run it again.
 */
export type MigrationOutcome = 'migrated' | 'current' | 'incomplete' | 'superseded';

export interface MigrationResult extends MigrationProgress {
  outcome: MigrationOutcome;
  /** `status.storedVersions` as the migration left it. */
  storedVersions: string[];
  /** The first failures (up to 20): the object and why. */
  failures: Array<{ object: string; reason: string }>;
  /** Why the outcome is `superseded`. */
  detail?: string;
}

const MAX_FAILURES_KEPT = 20;

/**
 * Migrates the objects of the CRD named `crd` (`widgets.example.com`) to its storage
 * version: when `status.storedVersions` lists another version too, lists every object
 * (metadata only, pages with continue tokens, going on past an expired token), rewrites
 * each (an empty merge patch, paced, conflicts and failing servers retried, deleted
 * objects skipped), then sets `storedVersions` to the storage version alone, unless an
 * object failed or the CRD changed meanwhile. Needs get on the CRD, patch on its status,
 * list and patch on the kind in every namespace.
 */
export async function migrateStorageVersion(
  transport: Pick<Transport, 'json' | 'request'> & Partial<Pick<Transport, 'requestStreamed'>>,
  crd: string,
  options: MigrateStorageVersionOptions = {},
): Promise<MigrationResult> {
  const started = Date.now();
  const log = options.logger ?? silentLogger;
  const definition = await readCustomResourceDefinition(transport, crd, options.signal);
  const plan = storageMigrationPlan(definition);
  if (!plan) {
    const storage = definition.spec.versions.find((version) => version.storage)?.name ?? '';
    const storedVersions = definition.status?.storedVersions ?? [storage];
    return { ...emptyProgress(crd, storage, []), outcome: 'current', storedVersions, failures: [] };
  }
  // Not before the API server stores the kind as the CRD says: else rewrites would keep the old version.
  await untilStoredAs(transport, plan, {
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.wait ? { wait: options.wait } : {}),
    ...(options.storedAsTimeoutMs !== undefined ? { timeoutMs: options.storedAsTimeoutMs } : {}),
  });
  const progress: MigrationProgress = emptyProgress(crd, plan.storage, plan.stale);
  const failures: MigrationResult['failures'] = [];
  const counted = { ...options, progress, failures, started };
  log.info(
    `storage-version migration of ${crd}: rewriting every object in ${plan.storage} (storedVersions [${plan.storedVersions.join(', ')}])`,
  );
  await rewriteAll(transport, plan, counted);
  progress.seconds = (Date.now() - started) / 1000;
  const summary = `${describeCounts(progress)} in ${progress.seconds.toFixed(1)} s`;
  if (progress.failed > 0) {
    log.warn(
      `storage-version migration of ${crd} incomplete: ${summary}; storedVersions stays [${plan.storedVersions.join(', ')}]. ` +
        `First failure: ${failures[0]!.object}: ${failures[0]!.reason}`,
    );
    return { ...progress, outcome: 'incomplete', storedVersions: plan.storedVersions, failures };
  }
  const trimmed = await trimStoredVersions(transport, plan, options);
  if ('superseded' in trimmed) {
    log.warn(`storage-version migration of ${crd} must run again: ${trimmed.superseded} (${summary})`);
    return {
      ...progress,
      outcome: 'superseded',
      storedVersions: trimmed.storedVersions,
      failures,
      detail: trimmed.superseded,
    };
  }
  log.info(
    `storage-version migration of ${crd} done: ${summary}; storedVersions is [${trimmed.storedVersions.join(', ')}]`,
  );
  return { ...progress, outcome: 'migrated', storedVersions: trimmed.storedVersions, failures };
}

/** '1,200 objects (1,000 rewritten, 150 already current, 50 gone, 0 failed)' */
export function describeCounts(counts: MigrationCounts): string {
  const total = counts.rewritten + counts.current + counts.gone + counts.failed;
  const n = (value: number) => value.toLocaleString('en-US');
  return (
    `${n(total)} objects (${n(counts.rewritten)} rewritten, ${n(counts.current)} already current, ` +
    `${n(counts.gone)} gone, ${n(counts.failed)} failed)`
  );
}

function emptyProgress(crd: string, storage: string, from: string[]): MigrationProgress {
  return { crd, storage, from, rewritten: 0, current: 0, gone: 0, failed: 0, seconds: 0 };
}

async function readCustomResourceDefinition(
  transport: Pick<Transport, 'json'>,
  name: string,
  signal: AbortSignal | undefined,
): Promise<CustomResourceDefinitionObject> {
  try {
    return await transport.json<CustomResourceDefinitionObject>(
      'GET',
      resourcePath(CustomResourceDefinition, undefined, name),
      signal ? { signal } : {},
    );
  } catch (error) {
    if (error instanceof KubeApiError && error.status === 404)
      throw new Error(`there is no CRD named ${name} (give its name as <plural>.<group>, e.g. widgets.example.com)`, {
        cause: error,
      });
    throw error;
  }
}

/** Every object of the kind, page by page, each page's rewrites `concurrency` at a time. */
async function rewriteAll(
  transport: Parameters<typeof migrateStorageVersion>[0],
  plan: StorageMigrationPlan,
  run: MigrateStorageVersionOptions & {
    progress: MigrationProgress;
    failures: MigrationResult['failures'];
    started: number;
  },
): Promise<void> {
  const { progress, failures, signal } = run;
  const log = run.logger ?? silentLogger;
  const pacer = new WritePacer(run.writesPerSecond ?? DEFAULT_MIGRATION_WRITES_PER_SECOND, undefined, run.wait);
  const concurrency = Math.max(1, run.concurrency ?? DEFAULT_MIGRATION_CONCURRENCY);
  let logged = run.started;
  const pages = listPages<KubeObject>(transport, resourcePath(plan.resource), {
    accept: METADATA_LIST_ACCEPT,
    pageSize: run.pageSize ?? 500,
    expired: 'continue',
    ...(signal ? { signal } : {}),
  });
  for await (const page of pages) {
    const rewrite = async (item: KubeObject) => {
      const meta = item.metadata ?? {};
      const path = resourcePath(plan.resource, meta.namespace, meta.name);
      let outcome: RewriteOutcome | 'failed';
      run.assertWritable?.();
      try {
        await pacer.take(signal);
        outcome = await rewriteObject(transport, path, meta.resourceVersion, {
          ...(signal ? { signal } : {}),
          ...(run.wait ? { wait: run.wait } : {}),
        });
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        outcome = 'failed';
        if (failures.length < MAX_FAILURES_KEPT) {
          const object = meta.namespace ? `${meta.namespace}/${meta.name}` : `${meta.name}`;
          failures.push({ object, reason: (error as Error).message });
        }
      }
      if (outcome === 'current') pacer.refund();
      progress[outcome]++;
    };
    await eachAtMost(page.items, concurrency, rewrite);
    if (signal?.aborted) throw signal.reason;
    progress.seconds = (Date.now() - run.started) / 1000;
    if (page.remainingItemCount !== undefined) progress.remaining = page.remainingItemCount;
    else delete progress.remaining;
    run.onProgress?.({ ...progress });
    if (page.continue && Date.now() - logged >= (run.progressLogMs ?? 10_000)) {
      logged = Date.now();
      const done = progress.rewritten + progress.current + progress.gone + progress.failed;
      log.info(
        `storage-version migration of ${plan.crd}: ${describeCounts(progress)} so far` +
          `${progress.remaining !== undefined ? `, about ${progress.remaining.toLocaleString('en-US')} to go` : ''}, ` +
          `${(done / progress.seconds).toFixed(0)} objects/s`,
      );
    }
  }
}

/** Runs `work` over `items`, at most `limit` at once; rejects with the first rejection once all settled. */
async function eachAtMost<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  const results = await Promise.allSettled(Array.from({ length: Math.min(limit, items.length) }, worker));
  const failed = results.find((result) => result.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
}

/**
 * Sets `storedVersions` to the storage version alone, guarded by the CRD's resourceVersion
 * and checked against the plan first; a 409 reads it again (five times at most).
 */
async function trimStoredVersions(
  transport: Pick<Transport, 'json'>,
  plan: StorageMigrationPlan,
  options: MigrateStorageVersionOptions,
): Promise<{ storedVersions: string[] } | { superseded: string; storedVersions: string[] }> {
  const path = `${resourcePath(CustomResourceDefinition, undefined, plan.crd)}/status`;
  for (let attempt = 1; ; attempt++) {
    const crd = await readCustomResourceDefinition(transport, plan.crd, options.signal);
    const storedVersions = crd.status?.storedVersions ?? [];
    const why = whyNotTrim(plan, crd);
    if (why) return { superseded: why, storedVersions };
    if (!storageMigrationPlan(crd)) return { storedVersions }; // trimmed already (another run)
    options.assertWritable?.();
    try {
      const trimmed = await transport.json<CustomResourceDefinitionObject>('PATCH', path, {
        body: trimStoredVersionsPatch(plan, crd.metadata?.resourceVersion),
        contentType: 'application/merge-patch+json',
        ...(options.signal ? { signal: options.signal } : {}),
      });
      return { storedVersions: trimmed.status?.storedVersions ?? [plan.storage] };
    } catch (error) {
      if (!(error instanceof KubeApiError && error.status === 409) || attempt >= 5) throw error;
    }
  }
}
