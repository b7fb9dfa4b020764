// A CustomResourceDefinition as the compatibility check reads it: any apiextensions.k8s.io/v1
// CRD (generated here, written by another tool, or read back from a cluster with its
// status), checked for what the check relies on, each problem named with where it was read.

/** A schema node as written in the CRD: checked keyword by keyword as the check reads it. */
export type SchemaNode = Readonly<Record<string, unknown>>;

/** One version of a CRD. */
export interface ComparedVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated: boolean;
  /** The version's `schema.openAPIV3Schema`. */
  schema: SchemaNode;
  /** `subresources.status` is set. */
  status: boolean;
  /** `subresources.scale`, when set. */
  scale?: SchemaNode;
}

/** A CRD read for the compatibility check (`readComparedCrd`). */
export interface ComparedCrd {
  /** `<plural>.<group>`. */
  name: string;
  /** Where it was read from, for messages: a file, `the generated CRDs`. */
  origin: string;
  scope: 'Namespaced' | 'Cluster';
  versions: ComparedVersion[];
  /** The one storage version. */
  storageVersion: string;
  /** `spec.conversion.strategy`; absent is None. */
  conversion: 'None' | 'Webhook';
  /** `status.storedVersions`, when the CRD was read back from a cluster (a file's null or [] is no list). */
  storedVersions?: string[];
}

/** A CRD the check cannot read: the message says where and why. */
export class CrdCompatibilityInputError extends Error {
  override readonly name = 'CrdCompatibilityInputError';
}

/** Reads an apiextensions.k8s.io/v1 CustomResourceDefinition object (parsed YAML or JSON). */
export function readComparedCrd(value: unknown, origin: string): ComparedCrd {
  if (!isMapping(value) || value.kind !== 'CustomResourceDefinition') {
    throw new CrdCompatibilityInputError(`${origin}: not a CustomResourceDefinition`);
  }
  const metadataName = isMapping(value.metadata) ? value.metadata.name : undefined;
  const where = `${origin}: the CustomResourceDefinition ${typeof metadataName === 'string' ? metadataName : '(without metadata.name)'}`;
  if (value.apiVersion !== 'apiextensions.k8s.io/v1') {
    throw new CrdCompatibilityInputError(
      `${where} is ${String(value.apiVersion)}; only apiextensions.k8s.io/v1 is compared (v1beta1 CRDs are not served since Kubernetes 1.22)`,
    );
  }
  if (typeof metadataName !== 'string' || metadataName === '') {
    throw new CrdCompatibilityInputError(`${where} has no metadata.name`);
  }
  const spec = value.spec;
  if (!isMapping(spec)) throw new CrdCompatibilityInputError(`${where} has no spec`);
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') {
    throw new CrdCompatibilityInputError(
      `${where}: spec.scope is ${JSON.stringify(spec.scope)}, not Namespaced or Cluster`,
    );
  }
  if (!Array.isArray(spec.versions) || spec.versions.length === 0) {
    throw new CrdCompatibilityInputError(`${where}: spec.versions is empty`);
  }
  const versions = spec.versions.map((entry: unknown, index: number) =>
    versionOf(entry, `${where}: spec.versions[${index}]`),
  );
  const names = new Set<string>();
  for (const version of versions) {
    if (names.has(version.name))
      throw new CrdCompatibilityInputError(`${where}: version ${version.name} is listed twice`);
    names.add(version.name);
  }
  const storage = versions.filter((version) => version.storage);
  if (storage.length !== 1) {
    throw new CrdCompatibilityInputError(
      `${where} has ${storage.length} storage versions (${storage.map((v) => v.name).join(', ') || 'none'}): exactly one must be storage: true`,
    );
  }
  const strategy = isMapping(spec.conversion) ? spec.conversion.strategy : undefined;
  if (strategy !== undefined && strategy !== 'None' && strategy !== 'Webhook') {
    throw new CrdCompatibilityInputError(
      `${where}: spec.conversion.strategy is ${JSON.stringify(strategy)}, not None or Webhook`,
    );
  }
  // controller-gen writes `storedVersions: null` (older releases `[]`) into CRD files: only a
  // cluster fills it, and a CRD it serves lists at least its storage version.
  const listed = isMapping(value.status) ? (value.status.storedVersions ?? undefined) : undefined;
  if (listed !== undefined && !isStringArray(listed)) {
    throw new CrdCompatibilityInputError(`${where}: status.storedVersions is not a list of version names`);
  }
  const storedVersions = listed?.length ? listed : undefined;
  return {
    name: metadataName,
    origin,
    scope: spec.scope,
    versions,
    storageVersion: storage[0]!.name,
    conversion: strategy ?? 'None',
    ...(storedVersions ? { storedVersions: [...storedVersions] } : {}),
  };
}

function versionOf(entry: unknown, at: string): ComparedVersion {
  if (!isMapping(entry) || typeof entry.name !== 'string' || entry.name === '') {
    throw new CrdCompatibilityInputError(`${at} has no version name (v1, v1beta1, ...)`);
  }
  const schema = isMapping(entry.schema) ? entry.schema.openAPIV3Schema : undefined;
  if (!isMapping(schema)) {
    throw new CrdCompatibilityInputError(
      `${at} (${entry.name}) has no schema.openAPIV3Schema, which apiextensions.k8s.io/v1 requires`,
    );
  }
  for (const key of ['served', 'storage'] as const) {
    if (typeof entry[key] !== 'boolean') {
      throw new CrdCompatibilityInputError(`${at} (${entry.name}): ${key} is not true or false`);
    }
  }
  const subresources = isMapping(entry.subresources) ? entry.subresources : {};
  return {
    name: entry.name,
    served: entry.served as boolean,
    storage: entry.storage as boolean,
    deprecated: entry.deprecated === true,
    schema,
    status: isMapping(subresources.status),
    ...(isMapping(subresources.scale) ? { scale: subresources.scale } : {}),
  };
}

export function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}
