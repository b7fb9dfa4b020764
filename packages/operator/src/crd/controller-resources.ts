import { allVersionsOf, getCustomResourceMetadata, type ResourceType } from './custom-resource.decorator.js';
import type { ClassType } from './field.decorator.js';

/** The kinds a controller reconciles, owns and watches: what decides the CRDs it needs. */
export interface ControllerResources {
  /** The primary kind (absent for a controller fed only by `@Source` streams). */
  resource?: ResourceType;
  owns?: readonly ResourceType[];
  watches?: readonly ResourceType[];
}

/**
 * The `@CustomResource` classes the controllers use as their kind, owned or watched kinds,
 * with every other version of those kinds loaded in the process (a CRD lists all versions).
 */
export function customResourcesOf(controllers: readonly ControllerResources[]): ClassType[] {
  const used = new Set<ClassType>();
  for (const c of controllers) {
    for (const type of [c.resource, ...(c.owns ?? []), ...(c.watches ?? [])]) {
      if (typeof type === 'function' && getCustomResourceMetadata(type)) used.add(type);
    }
  }
  return allVersionsOf([...used]);
}
