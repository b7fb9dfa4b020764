import { SetMetadata } from '@nestjs/common';
import { OPERATOR_FINALIZER_METADATA } from '../operator.constants.js';

export interface FinalizerMetadata {
  /** The finalizer's name on the object (default `<group>/finalizer`, `nestor.dev/finalizer` for core kinds). */
  name?: string;
}

/**
 * Marks the method that cleans up when an object is deleted. The framework adds the
 * finalizer to every object it reconciles, calls this method once the object is being
 * deleted, and removes the finalizer when the method succeeds (a throw retries it).
 */
export function Finalizer(name?: string): MethodDecorator {
  return SetMetadata(OPERATOR_FINALIZER_METADATA, { ...(name ? { name } : {}) } satisfies FinalizerMetadata);
}
