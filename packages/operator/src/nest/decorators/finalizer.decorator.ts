import { SetMetadata } from '@nestjs/common';
import { OPERATOR_FINALIZER_METADATA } from '../operator.constants.js';

/** What `@Finalizer` records on a controller class: the finalizer's name and its method. */
export interface FinalizerMetadata {
  /** The finalizer's name on the object (default `<group>/finalizer`, `nestor.dev/finalizer` for core kinds). */
  name?: string;
  /**
   * A finalizer on a kind this application does not define (a ConfigMap, another
   * operator's custom resource) with no namespace and no label selector would land on every
   * such object in the cluster, and uninstalling the operator would block their deletion.
   * That is refused at start-up unless this is true.
   */
  unscoped?: boolean;
}

/**
 * Marks the method that cleans up when an object is deleted. The framework adds the
 * finalizer to every object it reconciles, calls this method once the object is being
 * deleted, and removes the finalizer when the method succeeds (a throw retries it).
 * `@Finalizer()`, `@Finalizer('example.com/cleanup')` or `@Finalizer({ name, unscoped })`.
 */
export function Finalizer(nameOrOptions?: string | FinalizerMetadata): MethodDecorator {
  const options: FinalizerMetadata = typeof nameOrOptions === 'string' ? { name: nameOrOptions } : { ...nameOrOptions };
  return SetMetadata(OPERATOR_FINALIZER_METADATA, options);
}
