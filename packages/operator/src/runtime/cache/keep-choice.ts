// What the informer of an owned or watched kind keeps (issue 45). kube-rs caches none of an
// owned kind's objects: it maps each event to the owner and drops the object. Nestor does the
// same by default where nothing reads the objects from the cache, keeping a skeleton per
// object (skeleton.ts) so that old objects and a resync's deletions still map, and starts
// keeping whole objects the first time a read asks for them (InformerCache.whenReadable).

/**
 * What a controller's informer of an owned or watched kind keeps: `objects` (today's
 * controller-runtime: every object, served to the cache's reads), `metadata` (their
 * metadata, PartialObjectMetadata, served to no read) or `none` (a skeleton per object,
 * enough to map its events, served to no read, never more). Left out: a skeleton until the
 * first read of the kind from the cache, then the objects.
 */
export type KeepChoice = 'objects' | 'metadata' | 'none';

export const KEEP_CHOICES: readonly KeepChoice[] = ['objects', 'metadata', 'none'];

/** One owned or watched kind of a controller, as far as what to keep goes. */
export interface RelatedKind {
  /** `owns`: its events requeue the controller owner; `watches`: a mapper turns them into requests. */
  role: 'owns' | 'watches';
  /** The entry's own choice (its `keep`). */
  keep?: KeepChoice;
  /** The kind's choice in the cache settings (`cache.keep`, `cache.byKind[].keep`): below the entry's. */
  kindKeep?: KeepChoice;
  /** Watched as PartialObjectMetadata: what the mapper sees. */
  metadataOnly?: boolean;
  /** The watch has predicates: they may compare an update's old object with the new one. */
  predicates?: boolean;
  /** Watched through a label or field selector (a shard's share, say): no read is served from it. */
  selected?: boolean;
}

/** What the informer is asked for (InformerSelector's fields, set only when true), and why, for the debug line. */
export interface KeepDecision {
  selector: {
    metadataOnly?: true;
    /** A skeleton per object (Informer's eventsOnly). */
    eventsOnly?: true;
    /** The first read of the kind from the cache makes it keep whole objects. */
    cacheOnRead?: true;
  };
  why: string;
}

/** A watch as decideKeep sees it (a WatchSource). */
export function watchedKind(watch: {
  keep?: KeepChoice;
  metadataOnly?: boolean;
  predicates?: readonly unknown[];
  labelSelector?: string;
  fieldSelector?: string;
}): RelatedKind {
  return {
    role: 'watches',
    keep: watch.keep,
    metadataOnly: watch.metadataOnly,
    predicates: (watch.predicates?.length ?? 0) > 0,
    selected: Boolean(watch.labelSelector || watch.fieldSelector),
  };
}

/** Checks a `keep` option; undefined passes. `where` names it in the error. */
export function checkKeep(keep: unknown, where: string): KeepChoice | undefined {
  if (keep === undefined || KEEP_CHOICES.includes(keep as KeepChoice)) return keep as KeepChoice | undefined;
  throw new TypeError(
    `${where} must be 'objects', 'metadata' or 'none' (or left out: cached from its first read), got ${JSON.stringify(keep)}`,
  );
}

/**
 * The rules, in order: the entry's `keep`, else the kind's; `objects` keeps the objects
 * (with metadataOnly only the entry's own `objects` is an error: the kind's gives way to it),
 * `metadata` their metadata, `none` a skeleton for good. Left out: a watch with predicates
 * keeps what it watches (they compare old objects with new ones); anything else keeps a
 * skeleton, cached from its first read when a read could be served from it (objects, no
 * selector).
 */
export function decideKeep(kind: RelatedKind): KeepDecision {
  const metadataOnly = kind.metadataOnly === true;
  const keep = kind.keep ?? kind.kindKeep;
  if (keep === 'objects' && metadataOnly && kind.keep === 'objects') {
    throw new Error(
      "keep: 'objects' asks for whole objects but metadataOnly watches their metadata only; use keep: 'metadata', or drop metadataOnly",
    );
  }
  const whose = kind.keep !== undefined ? 'asked by the controller' : "asked by the cache's settings";
  switch (keep) {
    case 'objects':
      return keeps(metadataOnly, `${metadataOnly ? 'metadata' : 'objects'} cached (${whose})`);
    case 'metadata':
      return keeps(true, `metadata cached (${whose})`);
    case 'none':
      return decision(
        metadataOnly,
        true,
        false,
        `watched for events only (${whose}); reads of it go to the API server`,
      );
  }
  if (kind.role === 'watches' && kind.predicates) {
    return keeps(metadataOnly, `${metadataOnly ? 'metadata' : 'objects'} cached: its predicates compare old objects`);
  }
  const cacheOnRead = !metadataOnly && !kind.selected;
  const why = cacheOnRead
    ? 'watched for events only until a read from the cache asks for its objects'
    : `watched for events only (${metadataOnly ? 'metadata only' : 'a selector'}: no read is served from it)`;
  return decision(metadataOnly, true, cacheOnRead, why);
}

function keeps(metadataOnly: boolean, why: string): KeepDecision {
  return decision(metadataOnly, false, false, why);
}

function decision(metadataOnly: boolean, eventsOnly: boolean, cacheOnRead: boolean, why: string): KeepDecision {
  return {
    selector: {
      ...(metadataOnly ? { metadataOnly: true } : {}),
      ...(eventsOnly ? { eventsOnly: true } : {}),
      ...(cacheOnRead ? { cacheOnRead: true } : {}),
    },
    why,
  };
}
