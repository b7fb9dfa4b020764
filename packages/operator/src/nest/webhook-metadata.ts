import type { Type } from '@nestjs/common';
import { MetadataScanner } from '@nestjs/core';
import type { ResourceDescriptor } from '@nestor/core';
import type { AdmissionOperation } from '../webhooks/admission-review.js';
import {
  webhookConfigurations,
  webhookPath,
  type WebhookConfiguration,
  type WebhookConfigurationOptions,
  type WebhookEntry,
  type WebhookOptions,
} from '../webhooks/webhook-configuration.js';
import type { WebhookHandlerKind, WebhookMetadata } from './decorators/webhook.decorator.js';
import { describeKind } from './controller-metadata.js';
import { OPERATOR_WEBHOOK_HANDLER_METADATA, OPERATOR_WEBHOOK_METADATA } from './operator.constants.js';
import * as messages from './operator.messages.js';

/** A `@Webhook` class as its decorators describe it: the one reading, as readControllerDefinition. */
export interface WebhookDefinition {
  className: string;
  target: Type;
  resource: ResourceDescriptor;
  options: WebhookOptions;
  /** Method names by handler. */
  handlers: Partial<Record<WebhookHandlerKind, string>>;
}

const scanner = new MetadataScanner();

const DECORATOR_NAMES: Record<WebhookHandlerKind, string> = {
  validateCreate: '@ValidateCreate()',
  validateUpdate: '@ValidateUpdate()',
  validateDelete: '@ValidateDelete()',
  default: '@Default()',
};

/** The definition of a `@Webhook` class, or undefined for any other class; throws on misuse. */
export function readWebhookDefinition(target: Type): WebhookDefinition | undefined {
  const metadata = Reflect.getMetadata(OPERATOR_WEBHOOK_METADATA, target) as WebhookMetadata | undefined;
  if (!metadata) return undefined;
  const className = target.name;
  const prototype = target.prototype as Record<string, unknown>;
  const found = new Map<WebhookHandlerKind, string[]>();
  for (const method of scanner.getAllMethodNames(prototype)) {
    const fn = prototype[method];
    if (typeof fn !== 'function') continue;
    const kind = Reflect.getMetadata(OPERATOR_WEBHOOK_HANDLER_METADATA, fn) as WebhookHandlerKind | undefined;
    if (kind) found.set(kind, [...(found.get(kind) ?? []), method]);
  }
  if (found.size === 0) throw new Error(messages.WEBHOOK_WITHOUT_HANDLERS(className));
  const handlers: WebhookDefinition['handlers'] = {};
  for (const [kind, methods] of found) {
    if (methods.length > 1) throw new Error(messages.TWO_WEBHOOK_HANDLERS(className, DECORATOR_NAMES[kind], methods));
    handlers[kind] = methods[0]!;
  }
  return {
    className,
    target,
    resource: describeKind(className, metadata.resource),
    options: metadata.options,
    handlers,
  };
}

/** The configuration entries of a definition: a validating one, a mutating one, or both. */
export function webhookEntries(definition: WebhookDefinition): WebhookEntry[] {
  const { handlers, resource, options } = definition;
  const entries: WebhookEntry[] = [];
  const validated: AdmissionOperation[] = [
    ...(handlers.validateCreate ? (['CREATE'] as const) : []),
    ...(handlers.validateUpdate ? (['UPDATE'] as const) : []),
    ...(handlers.validateDelete ? (['DELETE'] as const) : []),
  ];
  if (validated.length) {
    entries.push({ type: 'validating', resource, operations: options.operations ?? validated, options });
  }
  if (handlers.default) {
    entries.push({ type: 'mutating', resource, operations: options.operations ?? ['CREATE', 'UPDATE'], options });
  }
  return entries;
}

/** Path of each served entry. */
export function webhookPaths(definition: WebhookDefinition): string[] {
  return webhookEntries(definition).map((e) => webhookPath(e.type, e.resource));
}

/**
 * The Validating and MutatingWebhookConfigurations for these classes (those without
 * `@Webhook` are skipped), pointing at a Service; `TestEnvironment.installWebhooks` points
 * them at a local server instead.
 */
export function webhookConfigurationsOf(
  classes: readonly Type[],
  options: WebhookConfigurationOptions = {},
): WebhookConfiguration[] {
  const entries = classes.flatMap((target) => {
    const definition = readWebhookDefinition(target);
    return definition ? webhookEntries(definition) : [];
  });
  return webhookConfigurations(entries, options);
}
