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
 * A paginated LIST as its pages, following continue tokens. A token that outlives etcd's
 * compaction (410 Gone between pages) restarts the list from the start, flagged on the
 * next page, as client-go's pager falls back to a full list.
 */
export async function* listPages<T>(
  transport: Pick<Transport, 'json'>,
  path: string,
  options: ListPagesOptions = {},
): AsyncGenerator<ListPage<T>> {
  const limit = options.pageSize ?? 500;
  let continueToken: string | undefined;
  let restarted = false;
  for (;;) {
    let page: KubeList<T>;
    try {
      page = await transport.json<KubeList<T>>('GET', path, {
        query: { ...options.query, limit, continue: continueToken },
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (error) {
      if (!(continueToken && error instanceof KubeApiError && error.isGone)) throw error;
      options.onRestart?.();
      continueToken = undefined;
      restarted = true;
      continue;
    }
    yield { items: page.items, resourceVersion: page.metadata?.resourceVersion, restarted };
    restarted = false;
    continueToken = page.metadata?.continue || undefined;
    if (!continueToken) return;
  }
}
