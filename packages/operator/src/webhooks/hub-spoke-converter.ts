// Conversion between the versions of one kind through a hub, as controller-runtime's Hub and
// Convertible: one hub version, and per other version (a spoke) a toHub and a fromHub;
// spoke -> spoke goes through the hub, a version to itself is the identity. Round trips
// through a spoke keep the hub's data in the conversion-data annotation (conversion-data.ts).
import { MAX_OBJECT_DEPTH } from '@nestor/core';
import {
  applyMergePatch,
  CONVERSION_DATA_ANNOTATION,
  dataOf,
  DEFAULT_MAX_CONVERSION_DATA_BYTES,
  isPlainObject,
  jsonEqual,
  mergePatch,
  nestsDeeperThan,
  readConversionData,
  setOwn,
  splitPatch,
} from './conversion-data.js';
import type { ConvertibleObject } from './conversion-review.js';
import { turn } from './event-loop-turn.js';

/**
 * How one spoke converts. Each function gets its own copy of the object: change it in place
 * and return it, or return a new one. Only `spec`, `status` and any other top-level field
 * matter, plus `metadata.labels` and `metadata.annotations` if set: apiVersion, kind and the
 * rest of metadata come from the object converted (the API server refuses any other change).
 * Both must be pure and deterministic: they also run to find what a spoke loses.
 */
export interface SpokeConversion<Hub = unknown, Spoke = unknown> {
  toHub(spoke: Spoke): Converted<Hub> | Promise<Converted<Hub>>;
  fromHub(hub: Hub): Converted<Spoke> | Promise<Converted<Spoke>>;
}

/** What a conversion returns: the object, or only its fields (apiVersion, kind and metadata are optional). */
export type Converted<T> = Omit<T, 'apiVersion' | 'kind' | 'metadata'> & {
  apiVersion?: string;
  kind?: string;
  metadata?: unknown;
};

export interface HubSpokeOptions {
  group: string;
  kind: string;
  /** The hub's version, e.g. 'v2'. */
  hub: string;
  /** Per spoke version ('v1beta1'), its conversions. */
  spokes: Record<string, SpokeConversion>;
  /**
   * Keep the hub's data a spoke cannot hold in the `nestor.dev/conversion-data` annotation on
   * the spoke, and restore it on the way back (default true), so hub -> spoke -> hub loses
   * nothing. Off, what a spoke cannot hold is gone after an update through it.
   */
  keepLostData?: boolean;
  /**
   * The largest conversion data, in bytes of JSON, kept on a spoke or restored from one
   * (default 64 KiB). Past it the data is not kept, or the annotation is ignored, and the
   * conversion reports it (ConvertOptions.onDataIgnored): any user who can write a spoke can
   * write the annotation, and restoring it costs work in proportion to its size.
   */
  maxConversionDataBytes?: number;
}

/** What one conversion is given besides the object. */
export interface ConvertOptions {
  /** Aborted, the conversion stops at its next step and throws the signal's reason. */
  signal?: AbortSignal;
  /**
   * Conversion data the converter did not keep or restore (too large, not JSON, or too
   * tangled to sort out in MAX_RESTORE_TRIALS): why, for the log and an Event on the object.
   */
  onDataIgnored?: (reason: string) => void;
}

/**
 * fromHub calls, past the whole patch, to find which parts of a spoke's conversion data it
 * still agrees with: halving the parts that do not fit finds one change the user made
 * through the spoke among n in about 2 log2(n) calls, and the bound keeps a hostile
 * annotation of thousands of such changes to a fixed number of calls, each linear in size.
 */
export const MAX_RESTORE_TRIALS = 32;

/** A conversion the converter cannot do, or a converter that threw: the message says which. */
export class ConversionError extends Error {
  override readonly name = 'ConversionError';
}

/** One kind's versions and how to convert between them. */
export class HubSpokeConverter {
  readonly group: string;
  readonly kind: string;
  readonly hub: string;
  private readonly spokes: ReadonlyMap<string, SpokeConversion>;
  private readonly keepLostData: boolean;
  private readonly maxDataBytes: number;

  constructor(options: HubSpokeOptions) {
    this.group = options.group;
    this.kind = options.kind;
    this.hub = options.hub;
    this.spokes = new Map(Object.entries(options.spokes));
    this.keepLostData = options.keepLostData ?? true;
    this.maxDataBytes = options.maxConversionDataBytes ?? DEFAULT_MAX_CONVERSION_DATA_BYTES;
    if (this.spokes.has(this.hub)) {
      throw new Error(`${this.kind}: version ${this.hub} is the hub and cannot be a spoke too`);
    }
    for (const [version, spoke] of this.spokes) {
      if (typeof spoke?.toHub !== 'function' || typeof spoke.fromHub !== 'function') {
        throw new Error(`${this.kind} ${version}: a spoke needs both toHub and fromHub functions`);
      }
    }
  }

  /** Every version this converter knows, the hub first. */
  get versions(): string[] {
    return [this.hub, ...this.spokes.keys()];
  }

  /**
   * The object at `desiredAPIVersion` (`<group>/<version>`). Name, namespace, uid and the
   * rest of metadata stay; throws ConversionError saying why when it cannot. Gives the event
   * loop a turn between its steps; an aborted `signal` stops it at the next one.
   */
  async convert(
    object: ConvertibleObject,
    desiredAPIVersion: string,
    options: ConvertOptions = {},
  ): Promise<ConvertibleObject> {
    // Before anything walks it: copies and diffs recurse, and so does JSON.stringify of the answer.
    if (nestsDeeperThan(object, MAX_OBJECT_DEPTH)) {
      throw new ConversionError(
        `the object nests deeper than ${MAX_OBJECT_DEPTH} levels (objects and arrays inside each other): refused`,
      );
    }
    if (object.apiVersion === desiredAPIVersion) return object;
    const from = this.versionOf(object.apiVersion, 'the object');
    const to = this.versionOf(desiredAPIVersion, 'the desired apiVersion');
    if (object.kind !== this.kind) {
      throw new ConversionError(`the object is a ${object.kind}, not a ${this.kind}`);
    }
    const hub = from === this.hub ? object : await this.toHub(object, from, options);
    if (to === this.hub) return hub;
    if (hub !== object) await turn(options.signal);
    return this.fromHub(hub, to, options);
  }

  private versionOf(apiVersion: string, what: string): string {
    const slash = apiVersion.indexOf('/');
    const group = apiVersion.slice(0, slash);
    const version = apiVersion.slice(slash + 1);
    if (slash < 0 || group !== this.group) {
      throw new ConversionError(`${what} is ${apiVersion}, not in the group ${this.group} of ${this.kind}`);
    }
    if (version !== this.hub && !this.spokes.has(version)) {
      throw new ConversionError(
        `${what} is ${apiVersion}, a version of ${this.kind} with no conversion (known: ${this.versions.join(', ')})`,
      );
    }
    return version;
  }

  private async toHub(spoke: ConvertibleObject, version: string, options: ConvertOptions): Promise<ConvertibleObject> {
    const conversion = this.spokes.get(version)!;
    const hubVersion = `${this.group}/${this.hub}`;
    const base = assemble(spoke, await call(conversion, 'toHub', version, spoke), hubVersion);
    setConversionData(base, undefined);
    const stored = this.keepLostData ? readConversionData(spoke, this.maxDataBytes) : undefined;
    if (!stored) return base;
    if ('ignored' in stored) {
      options.onDataIgnored?.(`${stored.ignored}: ignored, the hub's data ${version} cannot hold is not restored`);
      return base;
    }
    // Restore what this spoke lost, but only what the spoke as written still agrees with:
    // restoring a value must not change how the hub looks from this spoke. A value the user
    // changed through the spoke (so the hub's old one no longer fits) is left as converted.
    // The whole patch first; a part that does not fit is halved, and the halves tried in
    // order, each on top of what fitted before.
    await turn(options.signal);
    const seen = dataOf(await call(conversion, 'fromHub', version, base));
    const fits = async (candidate: ConvertibleObject) =>
      jsonEqual(dataOf(await call(conversion, 'fromHub', version, candidate)), seen);
    let restored = base;
    // Never apiVersion, kind or metadata: the patch is of dataOf, whatever the annotation says.
    const pending: unknown[] = [dataOf(stored.patch)];
    for (let trials = 0; pending.length; trials++) {
      if (trials > MAX_RESTORE_TRIALS) {
        options.onDataIgnored?.(
          `its ${CONVERSION_DATA_ANNOTATION} annotation holds more changes that ${version} no longer agrees with than ${MAX_RESTORE_TRIALS} trials sort out: ${pending.length} part(s) of it not restored`,
        );
        break;
      }
      await turn(options.signal);
      const patch = pending.pop();
      const candidate = withData(restored, applyMergePatch(dataOf(restored), patch));
      await turn(options.signal);
      if (await fits(candidate)) {
        restored = candidate;
        continue;
      }
      const halves = splitPatch(patch);
      if (halves) pending.push(halves[1], halves[0]);
    }
    return restored;
  }

  private async fromHub(hub: ConvertibleObject, version: string, options: ConvertOptions): Promise<ConvertibleObject> {
    const conversion = this.spokes.get(version)!;
    const spoke = assemble(hub, await call(conversion, 'fromHub', version, hub), `${this.group}/${version}`);
    let lost: string | undefined;
    if (this.keepLostData) {
      const back = await call(conversion, 'toHub', version, spoke);
      const patch = mergePatch(dataOf(back), dataOf(hub));
      lost = patch === undefined ? undefined : JSON.stringify(patch);
      const bytes = lost === undefined ? 0 : Buffer.byteLength(lost);
      if (bytes > this.maxDataBytes) {
        options.onDataIgnored?.(
          `the hub's data ${version} cannot hold is ${bytes} bytes of JSON, over the limit of ${this.maxDataBytes}: not kept in the ${CONVERSION_DATA_ANNOTATION} annotation, so converting back to the hub loses it`,
        );
        lost = undefined;
      }
    }
    setConversionData(spoke, lost);
    return spoke;
  }
}

/** Runs a user's conversion on a copy (it may change its argument), checking what it returns. */
async function call(
  conversion: SpokeConversion,
  direction: 'toHub' | 'fromHub',
  version: string,
  object: ConvertibleObject,
): Promise<Record<string, unknown>> {
  let result: unknown;
  try {
    result = await conversion[direction](copyJson(object));
  } catch (error) {
    throw new ConversionError(`${direction} of ${version} failed: ${(error as Error)?.message ?? String(error)}`, {
      cause: error,
    });
  }
  if (!isPlainObject(result)) {
    throw new ConversionError(`${direction} of ${version} returned ${describe(result)}, not an object`);
  }
  return result;
}

/**
 * The converted object: the converter's fields at `apiVersion`, with the source's kind and
 * metadata (labels and annotations as the converter set them, when it set them).
 */
function assemble(source: ConvertibleObject, converted: Record<string, unknown>, apiVersion: string) {
  const { apiVersion: _a, kind: _k, metadata: set, ...data } = converted;
  const metadata = { ...source.metadata };
  if (isPlainObject(set)) {
    for (const key of ['labels', 'annotations'] as const) {
      if (!Object.hasOwn(set, key)) continue;
      if (set[key] === undefined) delete metadata[key];
      else metadata[key] = set[key] as Record<string, string>;
    }
  }
  return { apiVersion, kind: source.kind, metadata, ...data } as ConvertibleObject;
}

function withData(object: ConvertibleObject, data: unknown): ConvertibleObject {
  return { apiVersion: object.apiVersion, kind: object.kind, metadata: object.metadata, ...(data as object) };
}

/** Sets the annotation to `lost` (a merge patch as JSON), or removes it when nothing was lost. */
function setConversionData(object: ConvertibleObject, lost: string | undefined): void {
  const metadata = (object.metadata ??= {});
  const annotations = { ...metadata.annotations };
  if (lost === undefined) delete annotations[CONVERSION_DATA_ANNOTATION];
  else annotations[CONVERSION_DATA_ANNOTATION] = lost;
  if (Object.keys(annotations).length) metadata.annotations = annotations;
  else delete metadata.annotations;
}

/**
 * A deep copy of a JSON value (what the API server sends): far cheaper than structuredClone.
 * Own keys only, each defined as data: a `__proto__` key stays a field of the copy.
 */
function copyJson<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(copyJson) as T;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) setOwn(copy, key, copyJson((value as Record<string, unknown>)[key]));
  return copy as T;
}

function describe(value: unknown): string {
  if (value === undefined || value === null) return String(value);
  return Array.isArray(value) ? 'an array' : typeof value;
}
