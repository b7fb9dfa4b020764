import { SetMetadata } from '@nestjs/common';
import type { ResourceType } from '../../crd/custom-resource.decorator.js';
import type { Predicate } from '../../runtime/predicates.js';
import { OPERATOR_WATCHES_METADATA } from '../operator.constants.js';

export interface WatchesOptions {
  namespace?: string;
  labelSelector?: string;
  /** Only objects matching this field selector, filtered by the API server (e.g. `metadata.name=settings`). */
  fieldSelector?: string;
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
