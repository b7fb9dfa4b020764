import { SetMetadata } from '@nestjs/common';
import type { ResourceDescriptor } from '@nestor/core';
import type { ResourceType } from '../../crd/custom-resource.decorator.js';
import type { WebhookOptions } from '../../webhooks/webhook-configuration.js';
import { OPERATOR_WEBHOOK_HANDLER_METADATA, OPERATOR_WEBHOOK_METADATA } from '../operator.constants.js';

export interface WebhookMetadata {
  resource: ResourceType;
  options: WebhookOptions;
}

/** Which admission method a webhook class's method is: one of the four decorators. */
export type WebhookHandlerKind = 'validateCreate' | 'validateUpdate' | 'validateDelete' | 'default';

/**
 * Marks a provider as the admission webhook of a kind: its @ValidateCreate(),
 * @ValidateUpdate(), @ValidateDelete() methods are served at `/validate-<group>-<version>-<kind>`,
 * its @Default() method at `/mutate-…`, on the webhook server's HTTPS port.
 */
export function Webhook(resource: ResourceType | ResourceDescriptor, options: WebhookOptions = {}): ClassDecorator {
  // Metadata only, as @Controller: the class stays an ordinary provider with injections.
  return SetMetadata(OPERATOR_WEBHOOK_METADATA, { resource, options } satisfies WebhookMetadata);
}

/** `(object, context: AdmissionContext) => string[] | void`: warnings, or throw AdmissionDenied. */
export function ValidateCreate(): MethodDecorator {
  return SetMetadata(OPERATOR_WEBHOOK_HANDLER_METADATA, 'validateCreate' satisfies WebhookHandlerKind);
}

/** `(object, oldObject, context: AdmissionContext) => string[] | void`: warnings, or throw AdmissionDenied. */
export function ValidateUpdate(): MethodDecorator {
  return SetMetadata(OPERATOR_WEBHOOK_HANDLER_METADATA, 'validateUpdate' satisfies WebhookHandlerKind);
}

/** `(object being deleted, context: AdmissionContext) => string[] | void`: warnings, or throw AdmissionDenied. */
export function ValidateDelete(): MethodDecorator {
  return SetMetadata(OPERATOR_WEBHOOK_HANDLER_METADATA, 'validateDelete' satisfies WebhookHandlerKind);
}

/**
 * `(object, context: AdmissionContext) => object | void`: sets defaults on the object in
 * place (or returns the defaulted object) on CREATE and UPDATE. The JSON Patch sent back is
 * the difference; the method must give the same result when called again on its own output.
 */
export function Default(): MethodDecorator {
  return SetMetadata(OPERATOR_WEBHOOK_HANDLER_METADATA, 'default' satisfies WebhookHandlerKind);
}
