import type { ClassType } from './field.decorator.js';
import { getCustomResourceMetadata, type CustomResourceMetadata } from './custom-resource.decorator.js';
import { schemaOf, SchemaError, type JSONSchemaProps } from './schema.js';

/**
 * An apiextensions.k8s.io/v1 CustomResourceDefinition (the fields generated here). A type
 * alias, not an interface, so it is assignable to index-signature types such as
 * @nestor/testing's CustomResourceDefinition.
 */
export type GeneratedCustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; annotations?: Record<string, string> };
  spec: {
    group: string;
    scope: 'Namespaced' | 'Cluster';
    names: {
      plural: string;
      singular: string;
      kind: string;
      listKind: string;
      shortNames?: string[];
      categories?: string[];
    };
    versions: Array<{
      name: string;
      served: boolean;
      storage: boolean;
      deprecated?: boolean;
      deprecationWarning?: string;
      schema: { openAPIV3Schema: JSONSchemaProps };
      subresources?: Record<string, unknown>;
      additionalPrinterColumns?: Array<{
        name: string;
        type: string;
        jsonPath: string;
        description?: string;
        format?: string;
        priority?: number;
      }>;
    }>;
    /** Absent: `None` (only apiVersion changes). `Webhook` is added by `nestor manifests` for kinds with a converter. */
    conversion?: CustomResourceConversion;
  };
};

/** A CRD's `spec.conversion` (apiextensions.k8s.io/v1). */
export type CustomResourceConversion =
  | { strategy: 'None' }
  | {
      strategy: 'Webhook';
      webhook: {
        conversionReviewVersions: string[];
        clientConfig: {
          url?: string;
          service?: { name: string; namespace: string; path?: string; port?: number };
          caBundle?: string;
        };
      };
    };

const RESERVED = new Set(['apiVersion', 'kind', 'metadata']);

/**
 * CRDs from `@CustomResource` classes: one per kind, with one version per class (several
 * classes of the same group and kind are versions of one CRD; exactly one is stored).
 */
export function customResourceDefinitions(classes: ClassType[]): GeneratedCustomResourceDefinition[] {
  const byName = new Map<string, Array<{ target: ClassType; metadata: CustomResourceMetadata }>>();
  for (const target of classes) {
    const metadata = getCustomResourceMetadata(target);
    if (!metadata) throw new Error(`${target.name} is not decorated with @CustomResource({ group, version, kind })`);
    const name = `${metadata.plural}.${metadata.group}`;
    byName.set(name, [...(byName.get(name) ?? []), { target, metadata }]);
  }
  return [...byName.entries()].map(([name, versions]) => definition(name, versions));
}

/** The CRD of one `@CustomResource` class (and any other versions given with it). */
export function customResourceDefinition(...versions: ClassType[]): GeneratedCustomResourceDefinition {
  const [crd, ...more] = customResourceDefinitions(versions);
  if (!crd || more.length)
    throw new Error(
      'customResourceDefinition() takes versions of one kind; use customResourceDefinitions() for several kinds',
    );
  return crd;
}

function definition(
  name: string,
  versions: Array<{ target: ClassType; metadata: CustomResourceMetadata }>,
): GeneratedCustomResourceDefinition {
  const first = versions[0]!.metadata;
  for (const { target, metadata } of versions) {
    if (metadata.kind !== first.kind || metadata.scope !== first.scope) {
      throw new Error(
        `${target.name} and ${versions[0]!.target.name} share ${name} but differ in kind or scope: versions of one CRD must agree`,
      );
    }
  }
  const seen = new Set<string>();
  for (const { target, metadata } of versions) {
    if (seen.has(metadata.version))
      throw new Error(`${name} declares version ${metadata.version} twice (${target.name})`);
    seen.add(metadata.version);
  }
  // The version marked { storage: true }; else the only one not marked { storage: false }.
  const marked = versions.filter((v) => v.metadata.options.storage === true);
  const unmarked = versions.filter((v) => v.metadata.options.storage === undefined);
  const storage = marked.length ? marked : unmarked.length === 1 ? unmarked : [];
  if (storage.length !== 1) {
    // None stored among those given: most often the stored version was left out.
    const missing =
      storage.length === 0
        ? `, and give every version (customResourceDefinition(${versions.map((v) => v.target.name).join(', ')}, <the others>), or customResourceDefinitions(allVersionsOf([${versions[0]!.target.name}])))`
        : '';
    throw new Error(
      `${name} has ${storage.length} storage versions (${storage.map((v) => v.metadata.version).join(', ') || 'none'}): mark exactly one version { storage: true }${missing}`,
    );
  }
  const { options } = first;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name },
    spec: {
      group: first.group,
      scope: first.scope,
      names: {
        plural: first.plural,
        singular: options.singular ?? first.kind.toLowerCase(),
        kind: first.kind,
        listKind: `${first.kind}List`,
        ...(options.shortNames ? { shortNames: options.shortNames } : {}),
        ...(options.categories ? { categories: options.categories } : {}),
      },
      versions: versions.map(({ target, metadata }) => version(target, metadata, metadata === storage[0]!.metadata)),
    },
  };
}

function version(target: ClassType, metadata: CustomResourceMetadata, storage: boolean) {
  const { options } = metadata;
  let root: JSONSchemaProps;
  try {
    root = schemaOf(target);
  } catch (error) {
    if (error instanceof SchemaError)
      throw new Error(`cannot generate the CRD schema of ${target.name}: ${error.message}`, { cause: error });
    throw error;
  }
  const properties: Record<string, JSONSchemaProps> = {
    apiVersion: {
      type: 'string',
      description: 'APIVersion defines the versioned schema of this representation of an object.',
    },
    kind: {
      type: 'string',
      description: 'Kind is a string value representing the REST resource this object represents.',
    },
    metadata: { type: 'object' },
  };
  for (const [key, value] of Object.entries(root.properties ?? {})) if (!RESERVED.has(key)) properties[key] = value;
  const required = (root.required ?? []).filter((r) => !RESERVED.has(r));
  const subresources = options.subresources
    ? Object.fromEntries(Object.entries(options.subresources).filter(([, v]) => v !== undefined))
    : undefined;
  const declared = options.printerColumns ?? [];
  const columns = declared.some((c) => c.name.toLowerCase() === 'age')
    ? declared
    : [...declared, { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }];
  const deprecated = options.deprecated;
  return {
    name: metadata.version,
    served: options.served ?? true,
    storage,
    ...(deprecated ? { deprecated: true } : {}),
    ...(typeof deprecated === 'string' ? { deprecationWarning: deprecated } : {}),
    schema: { openAPIV3Schema: { type: 'object' as const, properties, ...(required.length ? { required } : {}) } },
    ...(subresources && Object.keys(subresources).length ? { subresources } : {}),
    additionalPrinterColumns: columns,
  };
}
