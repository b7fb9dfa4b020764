// What the webhook server takes, apart from the server itself (webhook-https-server.ts), so
// that the listener it loads at start (webhook-listener.ts) names them without importing it.
import type { KubeObject, RuntimeLogger } from '@nestor/core';
import type { ApiTransport } from '../webhooks/ca-bundle-injection.js';
import type { ReviewEnvelopeFields } from '../webhooks/json-scanner.js';
import type { WebhookServingOptions } from './serving-options.js';

/** A path's handler: the parsed body and query in, the review to answer with 200 out; MalformedReviewError for 400. */
export interface WebhookRoute {
  answer(body: unknown, query: URLSearchParams): Promise<unknown>;
  /** The answer refusing a review too deep or too large to parse, in the review's own terms when its envelope was read. */
  refuse(envelope: ReviewEnvelopeFields, message: string): unknown;
}

export const DEFAULT_WEBHOOK_PORT = 9443;

/** Where the server reports each request of a path it serves (OperatorMetrics.webhookSink()). */
export interface WebhookMetrics {
  started(webhook: string): void;
  finished(webhook: string, code: number, seconds: number): void;
  /** A review refused: admission allowed=false, or a conversion answered Failure. */
  denied(webhook: string, code: number): void;
  serving?(webhooks: readonly string[]): void;
}

export interface WebhookHttpsServerOptions extends WebhookServingOptions {
  /** The API server, for self-managed certificates (their Secret and the caBundles). */
  transport?: ApiTransport;
  /** The self-managed Secret's namespace when `selfManaged.namespace` names none (default 'default'). */
  namespace?: () => string;
  /** Where conversion data ignored on an object is reported, besides the log (the manager's EventRecorder). */
  events?: { record(object: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string): void };
  /** Where each part logs, by context (Webhooks, WebhookCertificate); default silent. */
  logger?: (context: string) => RuntimeLogger;
  /** Request counts, latencies and denials per path. */
  metrics?: WebhookMetrics;
}
