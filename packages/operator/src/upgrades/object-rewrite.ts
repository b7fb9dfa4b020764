// One object written back as it is, so that the API server stores it in the storage version.
//
// An empty JSON merge patch (`{}`). Checked on kube-apiserver 1.37 against etcd's bytes
// (upgrades/storage-version-migration.e2e.test.ts): the server applies it, encodes the
// result in the storage version and compares those bytes with the ones etcd holds; an object
// stored in another version differs (its apiVersion at least), so it is written, and one
// stored in the storage version already is left alone (no etcd write, no watch event, its
// resourceVersion unchanged). An update with the unchanged object (what
// kube-storage-version-migrator sends) is stored the same way, but it carries the whole
// object and a resourceVersion precondition, so any change made since the LIST costs a 409
// and a GET; the patch needs neither, and no body.
import { KubeApiError, METADATA_WATCH_ACCEPT, sleep, type Transport } from '@nestor/core';

/**
 * What became of one object: `rewritten` (its resourceVersion moved: this write, or one made
 * since it was listed, stored it in the storage version), `current` (stored in the storage
 * version already: the server wrote nothing), `gone` (deleted since it was listed).
 */
export type RewriteOutcome = 'rewritten' | 'current' | 'gone';

export interface RewriteOptions {
  signal?: AbortSignal;
  /** Attempts for a conflict, a throttled or failing server, a lost connection (default 5). */
  attempts?: number;
  /** The first wait between attempts, doubled each time (default 200 ms). */
  retryMs?: number;
  /** How a wait between attempts is slept (tests). */
  wait?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** The answer as metadata only: one object as PartialObjectMetadata, as a metadata watch's events carry it. */
const METADATA_ACCEPT = METADATA_WATCH_ACCEPT;

/** A merge patch that changes nothing. */
const EMPTY_PATCH = Buffer.from('{}');

/**
 * Rewrites the object at `path` (listed at `listedVersion`) with an empty merge patch; its
 * answer is asked as metadata only. A 404 is `gone`; a 409, a 429 the transport gave up
 * on, a 5xx or no answer is tried again with backoff; anything else (an object the current
 * schema or an admission webhook refuses) throws, naming the object.
 */
export async function rewriteObject(
  transport: Pick<Transport, 'request'>,
  path: string,
  listedVersion: string | undefined,
  options: RewriteOptions = {},
): Promise<RewriteOutcome> {
  const attempts = options.attempts ?? 5;
  const wait = options.wait ?? sleep;
  let delay = options.retryMs ?? 200;
  for (let attempt = 1; ; attempt++) {
    let error: KubeApiError;
    try {
      const { status, headers, body } = await transport.request('PATCH', path, {
        body: EMPTY_PATCH,
        contentType: 'application/merge-patch+json',
        accept: METADATA_ACCEPT,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      if (status < 400) {
        const written = (JSON.parse(body.toString('utf8')) as { metadata?: { resourceVersion?: string } }).metadata;
        return written?.resourceVersion === listedVersion ? 'current' : 'rewritten';
      }
      if (status === 404) return 'gone';
      error = KubeApiError.fromResponse({ method: 'PATCH', path }, status, body, headers['retry-after']);
    } catch (thrown) {
      if (!(thrown instanceof KubeApiError) || options.signal?.aborted) throw thrown;
      error = thrown;
    }
    if (!transient(error) || attempt >= attempts) throw error;
    await wait(error.retryAfterSeconds !== undefined ? error.retryAfterSeconds * 1000 : delay, options.signal);
    if (options.signal?.aborted) throw error;
    delay *= 2;
  }
}

/** Worth another attempt: a conflict, throttling, a failing or unreachable server. */
function transient(error: KubeApiError): boolean {
  return error.status === 0 || error.status === 409 || error.status === 429 || error.status >= 500;
}
