import { Injectable } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { readConversionDefinition, type ConversionDefinition } from './conversion-metadata.js';
import { discoverDecorated, refuseDuplicateKeys, type Discovered } from './discover-decorated.js';
import * as messages from './operator.messages.js';
import { readWebhookDefinition, webhookPaths, type WebhookDefinition } from './webhook-metadata.js';

/** A @Webhook class the application provides, with the instance Nest created. */
export type DiscoveredWebhook = Discovered<WebhookDefinition>;

/** A @Conversion class the application provides, with the instance Nest created. */
export type DiscoveredConversion = Discovered<ConversionDefinition>;

/**
 * Finds every @Webhook and @Conversion class among the application's providers, as
 * OperatorExplorer finds controllers: discovery and validation only. WebhookServer serves
 * what it finds.
 */
@Injectable()
export class WebhookExplorer {
  constructor(private readonly discovery: DiscoveryService) {}

  explore(): DiscoveredWebhook[] {
    const found = discoverDecorated(this.discovery, readWebhookDefinition, messages.WEBHOOK_REQUEST_SCOPED);
    refuseDuplicateKeys(found, webhookPaths, messages.DUPLICATE_WEBHOOK_PATH);
    return found;
  }

  /** The @Conversion classes, one per kind (a kind has one hub). */
  exploreConversions(): DiscoveredConversion[] {
    const found = discoverDecorated(this.discovery, readConversionDefinition, messages.CONVERSION_REQUEST_SCOPED);
    refuseDuplicateKeys(found, (c) => [c.crdName], messages.TWO_CONVERSIONS);
    return found;
  }
}
