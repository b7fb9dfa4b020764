import { KubeApiError } from './errors.js';
import type { Query, Transport } from './transport.js';

/** One page of a paginated LIST. */
export interface ListPage<T> {
  items: T[];
  /** The list's resourceVersion (set on every page; the last page's is the list's). */
  resourceVersion?: string;
  /**
   * True on the first page after the continue token expired (etcd compacted it between
   * pages) and the list started again from the beginning: what was gathered before is stale.
   */
  restarted: boolean;
}

export interface ListPagesOptions {
  /** Selectors and other query parameters. */
  query?: Query;
  /** Objects per page (default 500, as client-go's pager). */
  pageSize?: number;
  signal?: AbortSignal;
  /** Called when the list starts again because its continue token expired. */
  onRestart?: () => void;
}

interface KubeList<T> {
  metadata?: { resourceVersion?: string; continue?: string };
  items: T[];
}

/**
 * A paginated LIST as its pages, following continue tokens. The next page is requested as
 * soon as a page arrives, so the API server prepares it while the caller processes this
 * one; never more than that one page ahead. A token that outlives etcd's compaction (410
 * Gone between pages) restarts the list from the start, flagged on the next page, as
 * client-go's pager falls back to a full list.
 */
export async function* listPages<T>(
  transport: Pick<Transport, 'json'>,
  path: string,
  options: ListPagesOptions = {},
): AsyncGenerator<ListPage<T>> {
  const limit = options.pageSize ?? 500;
  // Ends the request read ahead when the caller stops early (break, throw, abort).
  const abort = new AbortController();
  const forward = () => abort.abort(options.signal?.reason);
  if (options.signal?.aborted) forward();
  options.signal?.addEventListener('abort', forward, { once: true });
  const fetch = (continueToken: string | undefined) => {
    const page = transport.json<KubeList<T>>('GET', path, {
      query: { ...options.query, limit, continue: continueToken },
      signal: abort.signal,
    });
    // Awaited later; until then a failure must not count as unhandled.
    page.catch(() => {});
    return { page, continueToken };
  };
  let next = fetch(undefined);
  let restarted = false;
  try {
    for (;;) {
      let page: KubeList<T>;
      try {
        page = await next.page;
      } catch (error) {
        if (!(next.continueToken && error instanceof KubeApiError && error.isGone)) throw error;
        options.onRestart?.();
        next = fetch(undefined);
        restarted = true;
        continue;
      }
      const continueToken = page.metadata?.continue || undefined;
      if (continueToken) next = fetch(continueToken);
      yield { items: page.items, resourceVersion: page.metadata?.resourceVersion, restarted };
      restarted = false;
      if (!continueToken) return;
    }
  } finally {
    options.signal?.removeEventListener('abort', forward);
    abort.abort(new Error('the list was not read to its end'));
  }
}
