// The owned CRDs of a ClusterServiceVersion, with the spec and status descriptors the
// OperatorHub console builds its forms and views from, read from the schema `@Field`
// generated: each field's JSON path, a display name from its name, its description, and the
// console widget its type calls for (operator-framework's x-descriptors).
import type { GeneratedCustomResourceDefinition } from '../../crd/crd-generator.js';
import type { JSONSchemaProps } from '../../crd/schema.js';

/** A spec or status descriptor of a CSV (operators.coreos.com/v1alpha1). */
export interface OlmDescriptor {
  path: string;
  displayName: string;
  description?: string;
  'x-descriptors'?: string[];
}

/** `spec.customresourcedefinitions.owned[]` of a CSV. */
export interface OwnedCrdDescription {
  name: string;
  version: string;
  kind: string;
  displayName: string;
  description: string;
  specDescriptors?: OlmDescriptor[];
  statusDescriptors?: OlmDescriptor[];
}

/** What the author says of a kind, which its schema cannot: how the console names and describes it. */
export interface OlmKindDescription {
  displayName?: string;
  description: string;
}

const UI = 'urn:alm:descriptor:com.tectonic.ui';
/** Fields nested deeper than this are shown with their parent (the console's forms flatten them). */
const MAX_DEPTH = 3;

/**
 * One entry per version of each CRD, as operator-sdk writes them (the bundle validator
 * checks every version of a bundled CRD is owned). `kinds` gives each kind's description.
 */
export function ownedCrdDescriptions(
  crds: readonly GeneratedCustomResourceDefinition[],
  kinds: Readonly<Record<string, OlmKindDescription>>,
): OwnedCrdDescription[] {
  return crds.flatMap((crd) =>
    crd.spec.versions.map((version) => {
      const kind = crd.spec.names.kind;
      const about = kinds[kind];
      if (!about) throw new Error(`no description of the kind ${kind}`);
      const properties = version.schema.openAPIV3Schema.properties ?? {};
      const spec = properties.spec ? descriptors(properties.spec, 'spec') : [];
      const status = properties.status ? descriptors(properties.status, 'status') : [];
      return {
        name: crd.metadata.name,
        version: version.name,
        kind,
        displayName: about.displayName ?? displayNameOf(kind),
        description: about.description,
        ...(spec.length ? { specDescriptors: spec } : {}),
        ...(status.length ? { statusDescriptors: status } : {}),
      };
    }),
  );
}

/** The descriptors of the fields under `spec` or `status`, their paths relative to it. */
function descriptors(root: JSONSchemaProps, side: 'spec' | 'status'): OlmDescriptor[] {
  const out: OlmDescriptor[] = [];
  const walk = (node: JSONSchemaProps, path: string[]) => {
    for (const [name, field] of Object.entries(node.properties ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
      const here = [...path, name];
      const nested = field.type === 'object' && field.properties && here.length < MAX_DEPTH;
      if (nested) {
        walk(field, here);
        continue;
      }
      const widgets = xDescriptors(field, name, side);
      out.push({
        path: here.join('.'),
        displayName: displayNameOf(name),
        ...(field.description ? { description: field.description } : {}),
        ...(widgets.length ? { 'x-descriptors': widgets } : {}),
      });
    }
  };
  walk(root, []);
  return out;
}

/** The console widgets for a field: a form control on the spec side, a view on the status side. */
function xDescriptors(field: JSONSchemaProps, name: string, side: 'spec' | 'status'): string[] {
  if (side === 'status') {
    if (name === 'conditions' && field.type === 'array') return ['urn:alm:descriptor:io.kubernetes.conditions'];
    if (name === 'phase' && field.type === 'string') return ['urn:alm:descriptor:io.kubernetes.phase'];
    return field.type === 'string' || field.type === 'integer' || field.type === 'number'
      ? ['urn:alm:descriptor:text']
      : [];
  }
  if (field.enum?.length) return field.enum.map((value) => `${UI}:select:${String(value)}`);
  if (field['x-kubernetes-int-or-string']) return [`${UI}:text`];
  switch (field.type) {
    case 'boolean':
      return [`${UI}:booleanSwitch`];
    case 'integer':
    case 'number':
      return name === 'replicas' || name === 'size' ? [`${UI}:podCount`] : [`${UI}:number`];
    case 'string':
      return [`${UI}:text`];
    default:
      return [`${UI}:advanced`];
  }
}

/** `replicaCount` -> `Replica Count`, `TLSConfig` -> `TLS Config`, `Widget` -> `Widget`. */
export function displayNameOf(name: string): string {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[\s_-]+/)
    .filter(Boolean);
  return words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join(' ');
}
