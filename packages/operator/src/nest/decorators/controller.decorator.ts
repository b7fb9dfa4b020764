import { SetMetadata } from '@nestjs/common';
import type { ResourceType } from '../../crd/custom-resource.decorator.js';
import type { FieldIndexer } from '../../runtime/cache/field-index.js';
import type { Predicate } from '../../runtime/controller/predicates.js';
import type { ResourceDescriptor } from '@nestor/core';
import { OPERATOR_CONTROLLER_METADATA } from '../operator.constants.js';
import type { ObjectSelector } from '../../client/object-selector.js';
import type { ClusterSelection } from '../../runtime/controller/controller-options.js';
import type { KeepChoice } from '../../runtime/cache/keep-choice.js';

/** What `@Controller` takes: the kind to reconcile, the kinds it owns, its selector, concurrency and cache settings. */
export interface ControllerOptions extends ObjectSelector {
  /** Unique name: metrics label and log field (default: the class name). */
  name?: string;
  /**
   * Kinds this controller creates and owns: their changes reconcile the owner. Their
   * informers keep a skeleton per child (enough to find the owner) until the first
   * `KubeClient` read of the kind asks for the children, which then waits until they are all
   * cached; a reconciler that only applies its children pays nothing for them. An entry
   * `{ resource: Deployment, keep: 'objects' }` caches them from the start, `keep: 'none'`
   * never (reads go to the API server); `{ resource: Secret, metadataOnly: true }` watches
   * only those objects' metadata.
   */
  owns?: Array<ResourceType | OwnedKind>;
  /**
   * Kinds the reconciler creates, updates or deletes without owning them (a controller fed
   * by a `@Source` has no kind to own them). Only read by `nestor manifests` for RBAC.
   */
  writes?: ResourceType[];
  /**
   * Kinds the reconciler only reads through KubeClient (`get`, `list`): a Secret it takes
   * settings from, a Node it looks at. `nestor manifests` grants get, list and watch on
   * them, and nothing more. Only read by `nestor manifests` for RBAC.
   */
  reads?: ResourceType[];
  /** Filters for the primary kind's events, e.g. [generationChanged]. */
  predicates?: Predicate<never>[];
  /**
   * Field indexes of the kind, by name (controller-runtime's IndexField): a mapper or a
   * reconcile finds the objects filed under a value with
   * `kube.list(Kind, { namespace, index: { name: value } })`, from the cache. E.g.
   * `{ secretName: (b: BackupSchedule) => b.spec.secretRef?.name }` to map a Secret to the
   * objects that name it.
   */
  indexes?: Readonly<Record<string, FieldIndexer<never>>>;
  /** Only objects in this namespace (default: the module's `namespace` option, else all). */
  namespace?: string;
  /**
   * Only objects in these namespaces: the primary and owned kinds get one informer per
   * namespace (as controller-runtime's cache with several namespaces), and `nestor manifests`
   * a Role in each. Not with `namespace`.
   */
  namespaces?: string[];
  /**
   * With the module's `sharding`: false runs this controller on the elected leader over
   * every object instead of on each shard's share (default true).
   */
  sharded?: boolean;
  /**
   * With the module's `fleet`: the clusters this controller reconciles its kind in: the
   * operator's own ('local', the default), every member cluster ('members'), both ('all'),
   * or those a function picks by name. The context's `cluster` names the one of each run,
   * and `ctx.client` reads and writes it.
   */
  clusters?: ClusterSelection;
  /** Reconciles of this controller at once (default 1). */
  maxConcurrentReconciles?: number;
  /** Abort a reconcile's signal after this long and retry it with backoff. */
  reconcileTimeoutMs?: number;
  /**
   * Give up on an object after this many failed reconciles in a row (kooper's max retries):
   * no more retries until it changes, and a Warning Event `RetriesExhausted` on it.
   * Default: retry with backoff for ever, as controller-runtime.
   */
  maxRetries?: number;
}

/** An owned kind with options (see `owns`). */
export interface OwnedKind {
  resource: ResourceType;
  /** Watch only the objects' metadata (PartialObjectMetadata); a read of the kind never starts caching it. */
  metadataOnly?: boolean;
  /**
   * What its informer keeps: 'objects' (cached from the start), 'metadata', or 'none' (a
   * skeleton per child for good). Left out: the module's `cache.keep`, else a skeleton until
   * the first read of the kind from the cache (see docs/reconcilers.md, "What is cached").
   */
  keep?: KeepChoice;
}

export interface ControllerMetadata {
  resource?: ResourceType;
  options: ControllerOptions;
}

/**
 * Marks a provider as the controller of a kind. Its @Reconcile() method is called with the
 * current object whenever it (or what it owns or watches) changes. Without a kind
 * (`@Controller()` or `@Controller({ ...options })`), the controller is fed only by
 * @Source() streams and its reconciler receives the request.
 */
export function Controller(resource?: ResourceType | ResourceDescriptor, options?: ControllerOptions): ClassDecorator;
export function Controller(options: ControllerOptions): ClassDecorator;
export function Controller(
  resourceOrOptions?: ResourceType | ResourceDescriptor | ControllerOptions,
  options: ControllerOptions = {},
): ClassDecorator {
  const metadata: ControllerMetadata = isKind(resourceOrOptions)
    ? { resource: resourceOrOptions, options }
    : { options: resourceOrOptions ?? options };
  // Metadata only: not Injectable(), which would reset a scope the class sets itself.
  // Any class decorator makes TypeScript emit the constructor types Nest injects by.
  return SetMetadata(OPERATOR_CONTROLLER_METADATA, metadata);
}

/** A class or a descriptor names a kind; a plain object without `plural` is options. */
function isKind(value: unknown): value is ResourceType {
  return typeof value === 'function' || (typeof value === 'object' && value !== null && 'plural' in value);
}

/** The same decorator, for files that also use Nest's HTTP `@Controller`. */
export const OperatorController = Controller;
