// CustomResourceDefinitions read from YAML or JSON (a file, stdin, `kubectl get crd -o yaml`)
// or from the API server, checked for what the generator and the file names rely on. The
// text is another project's: sizes are bounded, aliases too (the yaml package's limit), and
// the group, version and kind are checked as the API server checks them before they become
// folder and file names.
import { parseAllDocuments } from 'yaml';

/**
 * Larger than any CRD file people publish (the API server stores a CRD of at most ~1.5 MB;
 * Gateway API's bundle of all its CRDs is ~2 MB), and read in seconds.
 */
export const MAX_SOURCE_BYTES = 16 * 1024 * 1024;

export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated: boolean;
  deprecationWarning?: string;
  /** Whether status is a subresource (written apart from the object, as kubebuilder's kinds). */
  statusSubresource: boolean;
  /** The version's openAPIV3Schema. */
  schema: Record<string, unknown>;
}

export interface CrdDefinition {
  /** Where it was read from, for messages: a file, `stdin`, `the cluster`. */
  origin: string;
  /** metadata.name: `<plural>.<group>`. */
  name: string;
  group: string;
  kind: string;
  plural: string;
  scope: 'Namespaced' | 'Cluster';
  versions: CrdVersion[];
}

/** What a source held besides CRDs, for the command's report. */
export interface CrdRead {
  crds: CrdDefinition[];
  /** One line per document that is not a CRD: `Namespace cert-manager`. */
  skipped: string[];
}

/** A source that is not a CRD the generator can read: the message says which and why. */
export class CrdSourceError extends Error {
  override readonly name = 'CrdSourceError';
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const KIND = /^[A-Za-z]([-A-Za-z0-9]*[A-Za-z0-9])?$/;

/** The CRDs of a YAML or JSON text: one or more documents, each a CRD, a List of them, or something else (skipped). */
export function crdsOfText(text: string, origin: string): CrdRead {
  if (Buffer.byteLength(text) > MAX_SOURCE_BYTES) {
    throw new CrdSourceError(`${origin}: larger than ${MAX_SOURCE_BYTES / 1024 / 1024} MiB; is it a CRD file?`);
  }
  const read: CrdRead = { crds: [], skipped: [] };
  for (const value of documentsOf(text, origin)) {
    if (value !== null && value !== undefined) collect(value, origin, read);
  }
  return read;
}

/**
 * The documents' values (shared with `nestor crd diff`'s reading). JSON (kubectl get -o json) goes through JSON.parse. For YAML, the
 * yaml package's duplicate-key check is off: it compares each key of a mapping with every
 * other, quadratic in the keys of another project's file (8,000 keys took 9 s here).
 */
export function documentsOf(text: string, origin: string): unknown[] {
  if (/^\s*\{/.test(text)) {
    try {
      return [JSON.parse(text)];
    } catch {
      // Not JSON after all (a YAML flow mapping, or broken): the YAML parser says where.
    }
  }
  const documents = parseAllDocuments(text, { uniqueKeys: false, prettyErrors: false });
  if (documents.some((document) => document.errors.length > 0)) {
    // Parsed again only to say where: line and column cost a pass of their own.
    const [error] = parseAllDocuments(text, { uniqueKeys: false, prettyErrors: true }).flatMap((d) => d.errors);
    throw new CrdSourceError(`${origin}: not YAML or JSON: ${error?.message ?? 'unreadable'}`);
  }
  return documents.map((document) => {
    try {
      return document.toJS({ maxAliasCount: 100 });
    } catch (failure) {
      throw new CrdSourceError(`${origin}: ${(failure as Error).message}`);
    }
  });
}

function collect(value: unknown, origin: string, read: CrdRead): void {
  if (!isMapping(value)) throw new CrdSourceError(`${origin}: a document is not a Kubernetes object (a mapping)`);
  if (value.kind === 'List' || (typeof value.kind === 'string' && value.kind.endsWith('List') && 'items' in value)) {
    if (!Array.isArray(value.items)) throw new CrdSourceError(`${origin}: a ${String(value.kind)} without items`);
    for (const item of value.items) collect(item, origin, read);
    return;
  }
  if (value.kind !== 'CustomResourceDefinition') {
    const name = isMapping(value.metadata) ? value.metadata.name : undefined;
    read.skipped.push(
      `${typeof value.kind === 'string' ? value.kind : 'an object without a kind'}${name ? ` ${String(name)}` : ''}`,
    );
    return;
  }
  read.crds.push(crdOf(value, origin));
}

/** A CRD object checked: apiextensions.k8s.io/v1, names and versions as the API server requires. */
export function crdOf(value: Record<string, unknown>, origin: string): CrdDefinition {
  const name = isMapping(value.metadata) && typeof value.metadata.name === 'string' ? value.metadata.name : undefined;
  const where = `${origin}: the CustomResourceDefinition ${name ?? '(without metadata.name)'}`;
  if (value.apiVersion !== 'apiextensions.k8s.io/v1') {
    throw new CrdSourceError(
      `${where} is ${String(value.apiVersion)}; only apiextensions.k8s.io/v1 is read (v1beta1 CRDs are not served since Kubernetes 1.22: take the project's newer release, or read it back from a cluster with --from-cluster)`,
    );
  }
  const spec = value.spec;
  if (!isMapping(spec)) throw new CrdSourceError(`${where} has no spec`);
  const names = isMapping(spec.names) ? spec.names : {};
  const group = spec.group;
  const kind = names.kind;
  const plural = names.plural;
  if (typeof group !== 'string' || !DNS_SUBDOMAIN.test(group) || group.length > 253) {
    throw new CrdSourceError(
      `${where}: spec.group ${JSON.stringify(group)} is not a DNS subdomain (e.g. cert-manager.io)`,
    );
  }
  if (typeof kind !== 'string' || !KIND.test(kind) || kind.length > 63) {
    throw new CrdSourceError(`${where}: spec.names.kind ${JSON.stringify(kind)} is not a kind (e.g. Certificate)`);
  }
  if (typeof plural !== 'string' || !DNS_LABEL.test(plural) || plural.length > 63) {
    throw new CrdSourceError(`${where}: spec.names.plural ${JSON.stringify(plural)} is not a lower-case resource name`);
  }
  if (name !== undefined && name !== `${plural}.${group}`) {
    throw new CrdSourceError(
      `${where}: its name must be ${plural}.${group} (spec.names.plural.spec.group), as the API server requires`,
    );
  }
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') {
    throw new CrdSourceError(`${where}: spec.scope is ${JSON.stringify(spec.scope)}, not Namespaced or Cluster`);
  }
  if (!Array.isArray(spec.versions) || spec.versions.length === 0) {
    throw new CrdSourceError(`${where}: spec.versions is empty`);
  }
  const versions = spec.versions.map((entry: unknown, index: number): CrdVersion => {
    const at = `${where}: spec.versions[${index}]`;
    if (!isMapping(entry) || typeof entry.name !== 'string' || !DNS_LABEL.test(entry.name) || entry.name.length > 63) {
      throw new CrdSourceError(`${at} has no version name (v1, v1beta1, ...)`);
    }
    const schema = isMapping(entry.schema) ? entry.schema.openAPIV3Schema : undefined;
    if (!isMapping(schema)) {
      throw new CrdSourceError(
        `${at} (${entry.name}) has no schema.openAPIV3Schema, which apiextensions.k8s.io/v1 requires`,
      );
    }
    return {
      name: entry.name,
      served: entry.served === true,
      storage: entry.storage === true,
      deprecated: entry.deprecated === true,
      ...(typeof entry.deprecationWarning === 'string' ? { deprecationWarning: entry.deprecationWarning } : {}),
      statusSubresource: isMapping(entry.subresources) && isMapping(entry.subresources.status),
      schema,
    };
  });
  const seen = new Set<string>();
  for (const version of versions) {
    if (seen.has(version.name)) throw new CrdSourceError(`${where}: version ${version.name} is listed twice`);
    seen.add(version.name);
  }
  return {
    origin,
    name: name ?? `${plural}.${group}`,
    group,
    kind,
    plural,
    scope: spec.scope,
    versions,
  };
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
