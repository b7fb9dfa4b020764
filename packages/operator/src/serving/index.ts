// The serving layer: everything that listens. /metrics with its TokenReview and
// SubjectAccessReview checks, the kubelet probes, the webhook HTTPS server, their
// certificates. No Nest: OperatorModule binds it, and a Nest-free program runs it beside
// its Manager (docs/ARCHITECTURE.md shows how).
export {
  MetricsAndProbesServer,
  type MetricsAndProbesServerOptions,
  type MetricsSource,
} from './metrics-and-probes-server.js';
export {
  WebhookHttpsServer,
  DEFAULT_WEBHOOK_PORT,
  type WebhookHttpsServerOptions,
  type WebhookMetrics,
  type WebhookRoute,
} from './webhook-https-server.js';
// From core, where webhook-certificates.ts takes it: that module (self-managed certificates) loads at start.
export { DEFAULT_WEBHOOK_CERT_DIR } from '@nestor/core';
export { ServingCertificate, type ServingCertificateOptions, type KeyPair } from './serving-certificate.js';
export { MetricsAccess, type AccessDecision, type MetricsAccessOptions } from './metrics-access.js';
export {
  apiServerReviews,
  type AccessReviews,
  type NonResourceRequest,
  type ReviewTransport,
  type UserInfo as ReviewedUser,
} from './access-reviews.js';
export type {
  MetricsServerOptions,
  HealthServerOptions,
  WebhookServingOptions,
  SelfManagedCertificateOptions,
} from './serving-options.js';
