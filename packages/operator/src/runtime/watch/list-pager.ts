import {
  type KubeObject,
  type ListTransport,
  listPages,
  METADATA_LIST_ACCEPT,
  type ObjectTooDeepError,
  type Query,
  type RuntimeLogger,
} from '@nestor/core';
import type { RelistPass } from './known-objects.js';

/** Where a full sync's listed objects go. */
export interface ListSink<T extends KubeObject> {
  /** A sync begins, or begins again (the list restarted): the pass its objects go into. */
  begin(): RelistPass<T>;
  /** A listed object, its apiVersion and kind set. */
  observe(pass: RelistPass<T>, raw: KubeObject): void;
  /** An object the decoder refused. */
  refused(error: ObjectTooDeepError, pass: RelistPass<T>): void;
}

/** Where a LIST that starts afresh reads from. */
export interface ListFrom {
  /** From the watch cache (resourceVersion 0), in one page. */
  cache: boolean;
  /** Not older than this resourceVersion (the watch cache too); neither: a consistent read. */
  notOlderThan?: string;
}

export interface ListPagerOptions {
  selectors: Query;
  pageSize: number;
  protobuf: boolean;
  dropManagedFields: boolean;
  metadataOnly: boolean;
  apiVersion: string;
  kind: string;
  /** 'deployments.apps' and the selector, for messages. */
  description: string;
  log: RuntimeLogger;
  /** The watch's own: a LIST it stopped is not resumed. */
  signal: AbortSignal;
}

/** A LIST that failed after some of its pages, and what it had read. */
interface Resume<T extends KubeObject> {
  pass: RelistPass<T>;
  continueToken: string;
  resourceVersion: string;
}

/**
 * The LISTs of a list+watch, page by page, each page decoded item by item as it arrives,
 * the next requested while this one is processed (core's listPages). A LIST that failed
 * part way resumes at the page that failed.
 */
export class ListPager<T extends KubeObject> {
  /**
   * A LIST that failed after some of its pages: the next attempt asks for the page after
   * them with the same continue token, into the same pass, instead of starting over.
   */
  private resume?: Resume<T>;

  constructor(
    private readonly transport: ListTransport,
    private readonly path: string,
    private readonly options: ListPagerOptions,
  ) {}

  /** The next LIST resumes at the page that failed. */
  get resuming(): boolean {
    return this.resume !== undefined;
  }

  /** The next sync is no LIST: what a failed one read is stale by then. */
  forget(): void {
    this.resume = undefined;
  }

  /**
   * One LIST into `sink`; `from` unless it resumes. `request.answered` is called as each
   * page arrives. Returns the pass and the list's resourceVersion.
   */
  async read(
    sink: ListSink<T>,
    from: ListFrom,
    request: { signal: AbortSignal; answered: () => void },
  ): Promise<{ pass: RelistPass<T>; resourceVersion: string }> {
    const { options } = this;
    const resume = this.resume;
    this.resume = undefined;
    let pass = resume ? resume.pass : sink.begin();
    let resourceVersion = resume?.resourceVersion ?? '';
    let continueToken = resume?.continueToken;
    let pagesRead = 0;
    // The first sync from the watch cache (as client-go's reflector), in one page, decoded
    // item by item as it arrives (protobuf or JSON). A relist must not go back in time: not
    // older than where its watch ended, or a consistent read.
    const fromCache = !resume && from.cache;
    const floor = resume ? undefined : from.notOlderThan;
    const pages = listPages<KubeObject>(this.transport, this.path, {
      query: fromCache
        ? { ...options.selectors, resourceVersion: '0' }
        : floor
          ? { ...options.selectors, resourceVersion: floor, resourceVersionMatch: 'NotOlderThan' }
          : options.selectors,
      pageSize: options.pageSize,
      signal: request.signal,
      ...(resume ? { continueFrom: resume.continueToken } : {}),
      // The continue token outlived etcd's compaction: the list starts again, into a new pass.
      onRestart: () => {
        options.log.info(`list of ${options.description} expired between pages; listing again`);
        pass = sink.begin();
      },
      protobuf: options.protobuf,
      dropManagedFields: options.dropManagedFields,
      ...(options.metadataOnly ? { accept: METADATA_LIST_ACCEPT } : {}),
      // Each object into the pass as it is decoded: none waits for the rest of its page (from
      // the watch cache, the whole list), so what the store does not keep dies young.
      onItem: (raw) => {
        if (!raw.kind) {
          // List items come without apiVersion and kind; watch events carry them.
          raw.apiVersion = options.apiVersion;
          raw.kind = options.kind;
        }
        sink.observe(pass, raw);
      },
    });
    try {
      for await (const page of pages) {
        request.answered();
        for (const refused of page.refused) sink.refused(refused, pass);
        resourceVersion = page.resourceVersion ?? '';
        continueToken = page.continue;
        pagesRead++;
      }
    } catch (error) {
      // A page failed (a cut connection, a 5xx): its continue token is still good until
      // etcd compacts it, so the next attempt asks for that page, not for the whole list
      // again. Once: an attempt that resumed and got no page starts over, in case the token
      // is what fails.
      if (continueToken && pagesRead > 0 && !options.signal.aborted) {
        this.resume = { pass, continueToken, resourceVersion };
      }
      throw error;
    }
    return { pass, resourceVersion };
  }
}
