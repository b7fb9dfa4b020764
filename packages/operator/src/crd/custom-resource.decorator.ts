import 'reflect-metadata';
import type { ResourceDescriptor } from '@nestor/core';
import type { ClassType } from './field.decorator.js';

export const CUSTOM_RESOURCE_METADATA = 'nestor:custom-resource';

/** A column `kubectl get` prints for a custom resource (additionalPrinterColumns). */
export interface PrinterColumn {
  name: string;
  type: 'integer' | 'number' | 'string' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  format?: string;
  priority?: number;
}

/** What `@CustomResource` takes: group, version, kind, scope, printer columns, storage version. */
export interface CustomResourceOptions {
  group: string;
  version: string;
  kind: string;
  /** Lower-case plural for REST paths (default: derived from kind, e.g. Memcached -> memcacheds). */
  plural?: string;
  singular?: string;
  shortNames?: string[];
  categories?: string[];
  scope?: 'Namespaced' | 'Cluster';
  subresources?: {
    status?: Record<string, never>;
    scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
  };
  printerColumns?: PrinterColumn[];
  /**
   * For several versions of one kind: the one stored in etcd. Mark it `true`, or mark every
   * other version `false` (a kind with one version is stored without saying so).
   */
  storage?: boolean;
  served?: boolean;
  deprecated?: boolean | string;
}

/** The normalized metadata of a @CustomResource class. */
export interface CustomResourceMetadata extends Required<
  Pick<CustomResourceOptions, 'group' | 'version' | 'kind' | 'plural' | 'scope'>
> {
  options: CustomResourceOptions;
}

/** 'Memcached' -> 'memcacheds', 'Policy' -> 'policies', 'Ingress' -> 'ingresses' (as kubebuilder guesses). */
export function pluralOf(kind: string): string {
  const lower = kind.toLowerCase();
  if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(lower)) return `${lower}es`;
  return `${lower}s`;
}

/**
 * Marks a class as a custom resource: the class is the type reconcilers receive, the
 * descriptor controllers watch, and (with @Field) the source of its CRD schema.
 */
export function CustomResource(options: CustomResourceOptions): ClassDecorator {
  for (const key of ['group', 'version', 'kind'] as const) {
    if (!options[key])
      throw new Error(
        `@CustomResource needs a ${key}: e.g. { group: 'cache.example.com', version: 'v1alpha1', kind: 'Memcached' }`,
      );
  }
  const metadata: CustomResourceMetadata = {
    group: options.group,
    version: options.version,
    kind: options.kind,
    plural: options.plural ?? pluralOf(options.kind),
    scope: options.scope ?? 'Namespaced',
    options,
  };
  return (target) => {
    Reflect.defineMetadata(CUSTOM_RESOURCE_METADATA, metadata, target);
    loadedClasses().add(target);
  };
}

/**
 * Every @CustomResource class loaded in this process, in load order: the other versions of
 * a kind a controller uses belong in its CRD too. Kept on globalThis so two copies of this
 * package (an app's and the CLI's) share it.
 */
function loadedClasses(): Set<ClassType> {
  const key = Symbol.for('nestor:custom-resource-classes');
  const global = globalThis as unknown as Record<symbol, Set<ClassType> | undefined>;
  return (global[key] ??= new Set());
}

/** The classes of every version of the given kinds loaded in this process (the given first). */
export function allVersionsOf(classes: readonly ClassType[]): ClassType[] {
  const out = new Set<ClassType>();
  const kinds = new Set<string>();
  for (const target of classes) {
    const metadata = getCustomResourceMetadata(target);
    if (!metadata) throw new Error(`${target.name} is not decorated with @CustomResource({ group, version, kind })`);
    out.add(target);
    kinds.add(`${metadata.plural}.${metadata.group}`);
  }
  for (const target of loadedClasses()) {
    const metadata = getCustomResourceMetadata(target)!;
    if (kinds.has(`${metadata.plural}.${metadata.group}`)) out.add(target);
  }
  return [...out];
}

/** `<plural>.<group>` of every `@CustomResource` kind loaded in this process: the CRDs this program defines. */
export function loadedCustomResourceNames(): Set<string> {
  const names = new Set<string>();
  for (const target of loadedClasses()) {
    const metadata = getCustomResourceMetadata(target)!;
    names.add(`${metadata.plural}.${metadata.group}`);
  }
  return names;
}

export function getCustomResourceMetadata(target: object): CustomResourceMetadata | undefined {
  return Reflect.getMetadata(CUSTOM_RESOURCE_METADATA, target) as CustomResourceMetadata | undefined;
}

/** A class decorated with @CustomResource, or a resource descriptor: what controllers accept as a kind. */
export type ResourceType<T = unknown> = ResourceDescriptor<T> | (abstract new (...args: never[]) => T);

/** The descriptor of a kind given as a descriptor or as a `@CustomResource` class. */
export function resourceOf<T>(type: ResourceType<T>): ResourceDescriptor<T> {
  if (typeof type === 'function') {
    const metadata = getCustomResourceMetadata(type);
    if (!metadata) {
      throw new Error(
        `${type.name} is not a kind: decorate it with @CustomResource({ group, version, kind }) or pass a descriptor such as Deployment`,
      );
    }
    let descriptor = descriptors.get(type);
    if (!descriptor) {
      descriptor = Object.freeze({
        group: metadata.group,
        version: metadata.version,
        kind: metadata.kind,
        plural: metadata.plural,
        namespaced: metadata.scope === 'Namespaced',
      });
      descriptors.set(type, descriptor);
    }
    return descriptor as ResourceDescriptor<T>;
  }
  if (!type || typeof type.plural !== 'string' || typeof type.kind !== 'string') {
    throw new Error(`${String(type)} is not a kind: pass a @CustomResource class or a descriptor such as Deployment`);
  }
  return type;
}

const descriptors = new WeakMap<object, ResourceDescriptor>();
