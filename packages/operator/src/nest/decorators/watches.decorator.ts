import { SetMetadata } from '@nestjs/common';
import type { ResourceType } from '../../crd/custom-resource.decorator.js';
import type { Predicate } from '../../runtime/predicates.js';
import { OPERATOR_WATCHES_METADATA } from '../operator.constants.js';
import type { ObjectSelector } from '../../client/object-selector.js';

export interface WatchesOptions extends ObjectSelector {
  /** Only objects in this namespace (default: the module's `namespace` option, else all). */
  namespace?: string;
  /** Only objects in these namespaces, one informer each. Not with `namespace`. */
  namespaces?: string[];
  /**
   * Cache only the objects' metadata (PartialObjectMetadata): the method gets apiVersion,
   * kind and metadata, no spec or status. For kinds the controller only maps.
   */
  metadataOnly?: boolean;
  predicates?: Predicate<never>[];
}

export interface WatchesMetadata {
  resource: ResourceType;
  options: WatchesOptions;
}

/**
 * Marks a method that maps an object of another kind to the requests it affects:
 * `(object) => ObjectRef[] | ObjectRef | undefined`.
 */
export function Watches(resource: ResourceType, options: WatchesOptions = {}): MethodDecorator {
  return SetMetadata(OPERATOR_WATCHES_METADATA, { resource, options } satisfies WatchesMetadata);
}
