import type { Type } from '@nestjs/common';
import { MetadataScanner } from '@nestjs/core';
import type { ResourceDescriptor } from '@nestor/core';
import { resourceOf, type ResourceType } from '../crd/custom-resource.decorator.js';
import { ownNamespace } from '../runtime/own-namespace.js';
import type { ControllerAccess, WatchNamespaces } from '../manifests/rbac.js';
import type { ControllerMetadata, ControllerOptions, OwnedKind } from './decorators/controller.decorator.js';
import type { FinalizerMetadata } from './decorators/finalizer.decorator.js';
import type { TimerOptions } from './decorators/timer.decorator.js';
import type { WatchesMetadata, WatchesOptions } from './decorators/watches.decorator.js';
import {
  OPERATOR_CONTROLLER_METADATA,
  OPERATOR_FINALIZER_METADATA,
  OPERATOR_RECONCILE_METADATA,
  OPERATOR_SOURCE_METADATA,
  OPERATOR_TIMER_METADATA,
  OPERATOR_WATCHES_METADATA,
} from './operator.constants.js';
import * as messages from './operator.messages.js';

/**
 * A @Controller class as its decorators describe it, read without creating it. The one
 * reading of the decorators: the explorer binds it to the instance Nest made, the
 * manifests scanner derives RBAC from it.
 */
export interface ControllerDefinition {
  className: string;
  target: Type;
  /** The primary kind; absent for a controller fed only by @Source streams. */
  resource?: ResourceType;
  options: ControllerOptions;
  /** The @Reconcile() method. */
  reconcile: string;
  finalizer?: { method: string; name?: string; unscoped?: boolean };
  watches: Array<{ method: string; resource: ResourceType; options: WatchesOptions }>;
  /** The @Source() methods. */
  sources: string[];
  /** The @Timer() methods. */
  timers: Array<{ method: string } & TimerOptions>;
}

const scanner = new MetadataScanner();

/**
 * The definition of a @Controller class, or undefined for any other class. Throws, naming
 * the class, when the decorators are misused (no or two @Reconcile, two @Finalizer, ...).
 */
export function readControllerDefinition(target: Type): ControllerDefinition | undefined {
  const metadata = Reflect.getMetadata(OPERATOR_CONTROLLER_METADATA, target) as ControllerMetadata | undefined;
  if (!metadata) return undefined;
  const className = target.name;
  const prototype = target.prototype as Record<string, unknown>;
  const reconciles: string[] = [];
  const finalizers: Array<{ method: string; name?: string; unscoped?: boolean }> = [];
  const watches: ControllerDefinition['watches'] = [];
  const sources: string[] = [];
  const timers: ControllerDefinition['timers'] = [];
  for (const method of scanner.getAllMethodNames(prototype)) {
    const fn = prototype[method];
    if (typeof fn !== 'function') continue;
    if (Reflect.getMetadata(OPERATOR_RECONCILE_METADATA, fn) === true) reconciles.push(method);
    const finalizer = Reflect.getMetadata(OPERATOR_FINALIZER_METADATA, fn) as FinalizerMetadata | undefined;
    if (finalizer) finalizers.push({ method, ...finalizer });
    const watch = Reflect.getMetadata(OPERATOR_WATCHES_METADATA, fn) as WatchesMetadata | undefined;
    if (watch) watches.push({ method, ...watch });
    if (Reflect.getMetadata(OPERATOR_SOURCE_METADATA, fn) === true) sources.push(method);
    const timer = Reflect.getMetadata(OPERATOR_TIMER_METADATA, fn) as TimerOptions | undefined;
    if (timer) timers.push({ method, ...timer });
  }
  if (reconciles.length === 0) throw new Error(messages.NO_RECONCILE(className));
  if (reconciles.length > 1) throw new Error(messages.TWO_RECONCILES(className, reconciles));
  if (finalizers.length > 1) {
    throw new Error(
      messages.TWO_FINALIZERS(
        className,
        finalizers.map((f) => f.method),
      ),
    );
  }
  if (!metadata.resource && sources.length === 0) throw new Error(messages.NO_KIND_NO_SOURCE(className));
  if (!metadata.resource && finalizers.length) throw new Error(messages.FINALIZER_WITHOUT_KIND(className));
  if (!metadata.resource && timers.length) throw new Error(messages.TIMER_WITHOUT_KIND(className, timers[0]!.method));
  if (metadata.options.namespace !== undefined && metadata.options.namespaces !== undefined) {
    throw new Error(messages.NAMESPACE_AND_NAMESPACES(className, '@Controller'));
  }
  for (const watch of watches) {
    if (watch.options.namespace !== undefined && watch.options.namespaces !== undefined) {
      throw new Error(messages.NAMESPACE_AND_NAMESPACES(className, `@Watches on ${watch.method}()`));
    }
  }
  return {
    className,
    target,
    ...(metadata.resource ? { resource: metadata.resource } : {}),
    options: metadata.options,
    reconcile: reconciles[0]!,
    ...(finalizers[0] ? { finalizer: finalizers[0] } : {}),
    watches,
    sources,
    timers,
  };
}

/** The kinds a controller touches, for its RBAC rules and CRDs. */
export function controllerAccess(definition: ControllerDefinition): ControllerAccess {
  // What runs in member clusters needs its rights there, not in the operator's own cluster.
  if (definition.options.clusters === 'members')
    return { owns: [], writes: [], reads: [], watches: [], finalizer: false };
  return accessOf(definition, (w) => w.options.clusters !== 'members');
}

/**
 * The rights a controller needs in each member cluster of a fleet: all of them where it runs
 * there (`clusters` other than 'local'); its `@Watches` of members where it only maps from
 * them; undefined where it touches no member.
 */
export function memberAccess(definition: ControllerDefinition): ControllerAccess | undefined {
  const clusters = definition.options.clusters ?? 'local';
  if (clusters !== 'local')
    return accessOf(definition, (w) => w.options.clusters === undefined || w.options.clusters === 'local');
  const watches = definition.watches.filter((w) => (w.options.clusters ?? 'local') !== 'local');
  if (watches.length === 0) return undefined;
  return { owns: [], writes: [], reads: [], ...watchAccess(watches), finalizer: false };
}

function accessOf(definition: ControllerDefinition, keep: (watch: ControllerDefinition['watches'][number]) => boolean) {
  return {
    ...(definition.resource ? { resource: definition.resource } : {}),
    owns: ownedTypes(definition.options),
    writes: definition.options.writes ?? [],
    reads: definition.options.reads ?? [],
    ...(definition.options.namespace ? { namespace: definition.options.namespace } : {}),
    ...(definition.options.namespaces ? { namespaces: definition.options.namespaces } : {}),
    ...watchAccess(definition.watches.filter(keep)),
    finalizer: definition.finalizer !== undefined,
  };
}

function watchAccess(watches: ControllerDefinition['watches']): Pick<ControllerAccess, 'watches' | 'watchNamespaces'> {
  return {
    watches: watches.map((w) => w.resource),
    ...(watches.some((w) => w.options.namespace || w.options.namespaces)
      ? { watchNamespaces: watches.map((w) => w.options.namespaces ?? watchNamespace(w.options.namespace)) }
      : {}),
  };
}

/** A `@Watches` namespace as the manifests see it: `ownNamespace` is where they deploy the operator. */
function watchNamespace(namespace: WatchesOptions['namespace']): WatchNamespaces | undefined {
  if (typeof namespace !== 'function') return namespace;
  return namespace === ownNamespace ? { operatorNamespace: true } : { atStartUp: true };
}

/** Every kind a controller watches: its own, the owned ones, the watched ones. */
export function kindsOf(definition: ControllerDefinition): ResourceType[] {
  return [
    ...(definition.resource ? [definition.resource] : []),
    ...ownedTypes(definition.options),
    ...definition.watches.map((w) => w.resource),
  ];
}

/** The owned kinds, without their options. */
export function ownedTypes(options: ControllerOptions): ResourceType[] {
  return (options.owns ?? []).map((entry) => (isOwnedKind(entry) ? entry.resource : entry));
}

/** `{ resource, metadataOnly }` rather than a class or descriptor. */
export function isOwnedKind(entry: ResourceType | OwnedKind): entry is OwnedKind {
  return typeof entry === 'object' && entry !== null && 'resource' in entry;
}

/** The descriptor of a kind a controller names, or an error that names the controller. */
export function describeKind(className: string, type: ResourceType): ResourceDescriptor {
  try {
    return resourceOf(type);
  } catch (error) {
    throw new Error(messages.INVALID_KIND(className, (error as Error).message), { cause: error });
  }
}
