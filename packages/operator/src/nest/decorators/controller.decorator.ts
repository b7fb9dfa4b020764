import { SetMetadata } from '@nestjs/common';
import type { ResourceType } from '../../crd/custom-resource.decorator.js';
import type { Predicate } from '../../runtime/predicates.js';
import type { ResourceDescriptor } from '../../runtime/resource.js';
import { OPERATOR_CONTROLLER_METADATA } from '../operator.constants.js';

export interface ControllerOptions {
  /** Unique name: metrics label and log field (default: the class name). */
  name?: string;
  /** Kinds this controller creates and owns: their changes reconcile the owner. */
  owns?: ResourceType[];
  /** Filters for the primary kind's events, e.g. [generationChanged]. */
  predicates?: Predicate<never>[];
  /** Only objects matching this label selector. */
  labelSelector?: string;
  /** Only objects in this namespace (default: the module's `namespace` option, else all). */
  namespace?: string;
  /** Reconciles of this controller at once (default 1). */
  maxConcurrentReconciles?: number;
  /** Abort a reconcile's signal after this long and retry it with backoff. */
  reconcileTimeoutMs?: number;
}

export interface ControllerMetadata {
  resource?: ResourceType;
  options: ControllerOptions;
}

/**
 * Marks a provider as the controller of a kind. Its @Reconcile() method is called with the
 * current object whenever it (or what it owns or watches) changes. Without a kind, the
 * controller is fed only by @Source() streams and its reconciler receives the request.
 */
export function Controller(
  resource?: ResourceType | ResourceDescriptor,
  options: ControllerOptions = {},
): ClassDecorator {
  const metadata: ControllerMetadata = { ...(resource ? { resource } : {}), options };
  // Metadata only: not Injectable(), which would reset a scope the class sets itself.
  // Any class decorator makes TypeScript emit the constructor types Nest injects by.
  return SetMetadata(OPERATOR_CONTROLLER_METADATA, metadata);
}

/** The same decorator, for files that also use Nest's HTTP `@Controller`. */
export const OperatorController = Controller;
