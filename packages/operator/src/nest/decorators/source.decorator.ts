import { SetMetadata } from '@nestjs/common';
import { OPERATOR_SOURCE_METADATA } from '../operator.constants.js';

/**
 * Marks a method (or property getter) that returns an `Observable<ObjectRef | ObjectRef[]>`
 * feeding the controller's queue from outside Kubernetes: a poller over an external API,
 * a message stream. Called once when the controller starts.
 */
export function Source(): MethodDecorator {
  return SetMetadata(OPERATOR_SOURCE_METADATA, true);
}
