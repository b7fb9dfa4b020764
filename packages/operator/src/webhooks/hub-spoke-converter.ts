// Conversion between the versions of one kind through a hub, as controller-runtime's Hub and
// Convertible: one hub version, and per other version (a spoke) a toHub and a fromHub;
// spoke -> spoke goes through the hub, a version to itself is the identity. Round trips
// through a spoke keep the hub's data in the conversion-data annotation (conversion-data.ts).
import {
  applyMergePatch,
  CONVERSION_DATA_ANNOTATION,
  dataOf,
  isPlainObject,
  jsonEqual,
  mergePatch,
  patchLeaves,
  readConversionData,
} from './conversion-data.js';
import type { ConvertibleObject } from './conversion-review.js';

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
}

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

  constructor(options: HubSpokeOptions) {
    this.group = options.group;
    this.kind = options.kind;
    this.hub = options.hub;
    this.spokes = new Map(Object.entries(options.spokes));
    this.keepLostData = options.keepLostData ?? true;
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
   * rest of metadata stay; throws ConversionError saying why when it cannot.
   */
  async convert(object: ConvertibleObject, desiredAPIVersion: string): Promise<ConvertibleObject> {
    if (object.apiVersion === desiredAPIVersion) return object;
    const from = this.versionOf(object.apiVersion, 'the object');
    const to = this.versionOf(desiredAPIVersion, 'the desired apiVersion');
    if (object.kind !== this.kind) {
      throw new ConversionError(`the object is a ${object.kind}, not a ${this.kind}`);
    }
    const hub = from === this.hub ? object : await this.toHub(object, from);
    return to === this.hub ? hub : this.fromHub(hub, to);
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

  private async toHub(spoke: ConvertibleObject, version: string): Promise<ConvertibleObject> {
    const conversion = this.spokes.get(version)!;
    const hubVersion = `${this.group}/${this.hub}`;
    const base = assemble(spoke, await call(conversion, 'toHub', version, spoke), hubVersion);
    setConversionData(base, undefined);
    const stored = this.keepLostData ? readConversionData(spoke) : undefined;
    if (!stored) return base;
    // Restore what this spoke lost, but only what the spoke as written still agrees with:
    // restoring a value must not change how the hub looks from this spoke. A value the user
    // changed through the spoke (so the hub's old one no longer fits) is left as converted.
    const seen = dataOf(await call(conversion, 'fromHub', version, base));
    const fits = async (candidate: ConvertibleObject) =>
      jsonEqual(dataOf(await call(conversion, 'fromHub', version, candidate)), seen);
    const whole = withData(base, applyMergePatch(dataOf(base), stored));
    if (await fits(whole)) return whole;
    let restored = base;
    for (const leaf of patchLeaves(stored)) {
      const candidate = withData(restored, applyMergePatch(dataOf(restored), leaf));
      if (await fits(candidate)) restored = candidate;
    }
    return restored;
  }

  private async fromHub(hub: ConvertibleObject, version: string): Promise<ConvertibleObject> {
    const conversion = this.spokes.get(version)!;
    const spoke = assemble(hub, await call(conversion, 'fromHub', version, hub), `${this.group}/${version}`);
    let lost: unknown;
    if (this.keepLostData) {
      const back = await call(conversion, 'toHub', version, spoke);
      lost = mergePatch(dataOf(back), dataOf(hub));
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
    result = await conversion[direction](structuredClone(object));
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
      if (!(key in set)) continue;
      if (set[key] === undefined) delete metadata[key];
      else metadata[key] = set[key] as Record<string, string>;
    }
  }
  return { apiVersion, kind: source.kind, metadata, ...data } as ConvertibleObject;
}

function withData(object: ConvertibleObject, data: unknown): ConvertibleObject {
  return { apiVersion: object.apiVersion, kind: object.kind, metadata: object.metadata, ...(data as object) };
}

/** Sets the annotation to `lost` (a merge patch), or removes it when nothing was lost. */
function setConversionData(object: ConvertibleObject, lost: unknown): void {
  const metadata = (object.metadata ??= {});
  const annotations = { ...metadata.annotations };
  if (lost === undefined) delete annotations[CONVERSION_DATA_ANNOTATION];
  else annotations[CONVERSION_DATA_ANNOTATION] = JSON.stringify(lost);
  if (Object.keys(annotations).length) metadata.annotations = annotations;
  else delete metadata.annotations;
}

function describe(value: unknown): string {
  if (value === undefined || value === null) return String(value);
  return Array.isArray(value) ? 'an array' : typeof value;
}
