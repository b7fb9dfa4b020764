import { KubeApiError } from './errors.js';
import { JsonListDecoder } from './json-list-stream.js';
import { withoutManagedFields, type KubeObject } from './kube-object.js';
import type { ObjectTooDeepError } from './object-depth.js';
import { errorBody, isProtobuf, PROTOBUF_ACCEPT } from './protobuf/envelope.js';
import { ProtobufListDecoder } from './protobuf/list-stream.js';
import { loadProtobufSchema, type ProtobufSchema } from './protobuf/schema.js';
import type { Transport } from './transport.js';
import type { Query } from './transport-requests.js';

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
  /**
   * Objects of this page the protobuf decoder refused (nested past MAX_OBJECT_DEPTH), each
   * naming its object; they are not in `items`. Read them another way (as JSON) or skip them.
   */
  refused: ObjectTooDeepError[];
  /** The continue token of the page after this one; undefined on the last page. */
  continue?: string;
  /**
   * Objects after this page, as the API server counts them (ListMeta.remainingItemCount):
   * set on pages of a list without selectors, when the server knows it.
   */
  remainingItemCount?: number;
}

export interface ListPagesOptions<T = unknown> {
  /** Selectors and other query parameters. */
  query?: Query;
  /** Objects per page (default 500, as client-go's pager). */
  pageSize?: number;
  signal?: AbortSignal;
  /**
   * Start at the page this continue token asks for (from a page of a list that failed
   * later), not at the first; an expired token starts the list again, flagged `restarted`.
   */
  continueFrom?: string;
  /** Called when the list starts again because its continue token expired. */
  onRestart?: () => void;
  /**
   * What an expired continue token does (410 Gone between pages: etcd compacted its
   * resourceVersion). 'restart' (the default, as client-go's pager): the list starts again
   * from the beginning, a consistent list. 'continue': it goes on from the token the 410
   * carries, at the current state: every object that existed throughout is still listed
   * once, those created, changed or deleted meanwhile may be or not. For a walk that visits
   * each object once (a storage-version migration) and may outlast etcd's compaction
   * window, where starting again would never end. A 410 without a token restarts.
   */
  expired?: 'restart' | 'continue';
  /**
   * Ask for protobuf (a built-in kind; never a custom resource), JSON if the server prefers;
   * both decode to the same objects. Ignored when the transport's `protobuf` option is off.
   */
  protobuf?: boolean;
  /** Drop metadata.managedFields (the informer drops them anyway): never decoded from protobuf, from JSON as each item comes. */
  dropManagedFields?: boolean;
  /** A JSON Accept value of its own (e.g. METADATA_LIST_ACCEPT); it rules out protobuf. */
  accept?: string;
  /**
   * Each item as soon as it is decoded, instead of in its page's `items` (then empty): a
   * page from the watch cache holds the whole list, and a caller that keeps little of each
   * object (an informer of skeletons) then never holds the list's objects at once, nor has
   * them outlive a scavenge into the old generation. Items come in the list's order; a page
   * that fails part way has handed over the items before the failure (a caller that starts
   * the list again sees them again), and the items of a list that starts again because its
   * continue token expired come after `onRestart`.
   */
  onItem?: (item: T) => void;
}

interface KubeList<T> {
  metadata?: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: T[] | null;
  refused?: ObjectTooDeepError[];
}

/** What listPages needs of a Transport: `json`; with `requestStreamed` pages are decoded as they arrive. */
export type ListTransport = Pick<Transport, 'json'> & Partial<Pick<Transport, 'requestStreamed' | 'protobuf'>>;

/**
 * A paginated LIST as its pages, following continue tokens. The next page is requested as
 * soon as a page arrives, so the API server prepares it while the caller processes this
 * one; never more than that one page ahead. A token that outlives etcd's compaction (410
 * Gone between pages) restarts the list from the start, flagged on the next page, as
 * client-go's pager falls back to a full list.
 */
export async function* listPages<T>(
  transport: ListTransport,
  path: string,
  options: ListPagesOptions<T> = {},
): AsyncGenerator<ListPage<T>> {
  const limit = options.pageSize ?? 500;
  let schema: ProtobufSchema | undefined;
  if (options.protobuf && !options.accept && transport.protobuf && transport.requestStreamed) {
    schema = await loadProtobufSchema();
    if (options.dropManagedFields) schema = schema.withoutManagedFields();
  }
  // Ends the request read ahead when the caller stops early (break, throw, abort).
  const abort = new AbortController();
  const forward = () => abort.abort(options.signal?.reason);
  if (options.signal?.aborted) forward();
  options.signal?.addEventListener('abort', forward, { once: true });
  const fetch = (continueToken: string | undefined) => {
    // A continue token carries its resourceVersion: the server refuses both.
    const query = continueToken
      ? {
          ...options.query,
          resourceVersion: undefined,
          resourceVersionMatch: undefined,
          limit,
          continue: continueToken,
        }
      : { ...options.query, limit };
    const request = { query, signal: abort.signal, ...(options.accept ? { accept: options.accept } : {}) };
    const page = transport.requestStreamed
      ? fetchStreamed<T>(
          transport as Pick<Transport, 'requestStreamed'>,
          path,
          request,
          schema,
          options.dropManagedFields === true,
          options.onItem,
        )
      : transport.json<KubeList<T>>('GET', path, request);
    // Awaited later; until then a failure must not count as unhandled.
    page.catch(() => {});
    return { page, continueToken };
  };
  let next = fetch(options.continueFrom || undefined);
  let restarted = false;
  try {
    for (;;) {
      let page: KubeList<T>;
      try {
        page = await next.page;
      } catch (error) {
        if (!(next.continueToken && error instanceof KubeApiError && error.isGone)) throw error;
        const inconsistent = options.expired === 'continue' ? error.statusObject?.metadata?.continue : undefined;
        if (inconsistent) {
          next = fetch(inconsistent);
          continue;
        }
        options.onRestart?.();
        next = fetch(undefined);
        restarted = true;
        continue;
      }
      const continueToken = page.metadata?.continue || undefined;
      if (continueToken) next = fetch(continueToken);
      if (options.onItem && page.items?.length) for (const item of page.items) options.onItem(item); // answered whole
      yield {
        items: options.onItem ? [] : (page.items ?? []),
        resourceVersion: page.metadata?.resourceVersion,
        restarted,
        refused: page.refused ?? [],
        ...(continueToken ? { continue: continueToken } : {}),
        ...(page.metadata?.remainingItemCount !== undefined
          ? { remainingItemCount: page.metadata.remainingItemCount }
          : {}),
      };
      restarted = false;
      if (!continueToken) return;
    }
  } finally {
    options.signal?.removeEventListener('abort', forward);
    abort.abort(new Error('the list was not read to its end'));
  }
}

/**
 * One page, decoded item by item as the body arrives (a page from the watch cache holds the
 * whole list, and is never held whole here): protobuf when `schema` asked for it and the
 * server answered so (`ProtobufListDecoder`), else JSON (`JsonListDecoder`).
 */
async function fetchStreamed<T>(
  transport: Pick<Transport, 'requestStreamed'>,
  path: string,
  request: { query: Query; signal: AbortSignal; accept?: string },
  schema: ProtobufSchema | undefined,
  dropManagedFields: boolean,
  /** Each item as decoded, none gathered in `items` (ListPagesOptions.onItem). */
  onItem?: (item: T) => void,
): Promise<KubeList<T>> {
  const response = await transport.requestStreamed(
    'GET',
    path,
    schema ? { ...request, accept: PROTOBUF_ACCEPT } : request,
  );
  try {
    const contentType = response.headers['content-type'];
    if (response.status >= 400) {
      const body = errorBody(await response.readBody(), contentType, schema);
      throw KubeApiError.fromResponse({ method: 'GET', path }, response.status, body, response.headers['retry-after']);
    }
    const items: T[] = [];
    const put = onItem ?? ((item: T) => void items.push(item));
    if (schema && isProtobuf(contentType)) {
      // managedFields, when dropped, are skipped on the wire by the schema.
      const decoder = new ProtobufListDecoder<T>(schema);
      for await (const chunk of response.chunks) {
        for (const item of decoder.write(chunk)) put(item);
      }
      decoder.end();
      return { metadata: decoder.metadata, items, refused: decoder.refused };
    }
    const take = (item: T) => {
      // Dropped as each item comes, while its parsed metadata is young: dropped after the
      // whole page (100,000 objects from the watch cache), the parsed ones die in the old
      // generation between the objects kept, and V8 kept 84 MB of those pages.
      const meta = (item as KubeObject).metadata;
      if (dropManagedFields && meta?.managedFields) (item as KubeObject).metadata = withoutManagedFields(meta);
      put(item);
    };
    const decoder = new JsonListDecoder<T>();
    for await (const chunk of response.chunks) {
      for (const item of decoder.write(chunk)) take(item);
    }
    const list = decoder.end();
    // Items the scan could not tell apart (an escaped `items` key) come parsed with the rest.
    for (const item of list.items ?? []) take(item);
    return { metadata: list.metadata as KubeList<T>['metadata'], items };
  } finally {
    response.release();
  }
}
