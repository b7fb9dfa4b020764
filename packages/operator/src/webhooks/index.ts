// Webhooks without Nest: admission and conversion reviews, their handlers, the
// configurations, self-managed certificates. The package entry `@nestor/operator/webhooks`; the serving
// layer's WebhookHttpsServer (`@nestor/operator/runtime`) serves them.

// Admission webhooks without Nest: the wire format, the handlers' semantics, the configurations
export { AdmissionDenied } from './admission-denied.js';
export {
  validate,
  mutate,
  type AdmissionContext,
  type ValidationHandlers,
  type DefaultingHandler,
  type Warnings,
  type HandlerFailure,
} from './admission-handler.js';
export {
  parseAdmissionReview,
  admissionReviewResponse,
  MalformedReviewError,
  type AdmissionOperation,
  type AdmissionRequest,
  type AdmissionResponse,
  type AdmissionReview,
  type AdmissionStatus,
  type UserInfo,
  type GroupVersionKind,
  type GroupVersionResource,
} from './admission-review.js';
export { jsonPatch, type JsonPatchOperation, type JsonValue } from './json-patch.js';

// Conversion webhooks without Nest: the wire format, hub and spokes, the conversion-data annotation
export {
  parseConversionReview,
  conversionReviewResponse,
  type ConversionReview,
  type ConversionRequest,
  type ConversionResponse,
  type ConversionReviewResponse,
  type ConversionResult,
  type ConvertibleObject,
} from './conversion-review.js';
export {
  HubSpokeConverter,
  ConversionError,
  MAX_RESTORE_TRIALS,
  type ConvertOptions,
  type HubSpokeOptions,
  type SpokeConversion,
  type Converted,
} from './hub-spoke-converter.js';
export {
  ConversionWebhook,
  CONVERSION_PATH,
  DEFAULT_CONVERSION_TIMEOUT_MS,
  type ConversionWebhookOptions,
} from './conversion-webhook.js';
export { CONVERSION_DATA_ANNOTATION, DEFAULT_MAX_CONVERSION_DATA_BYTES } from './conversion-data.js';
export {
  webhookConfigurations,
  webhookPath,
  type WebhookOptions,
  type WebhookConfiguration,
  type WebhookConfigurationOptions,
  type WebhookEntry,
  type WebhookType,
  type LabelSelector,
  type MatchCondition,
} from './webhook-configuration.js';
// Self-managed webhook certificates: a CA and a certificate kept in a Secret, caBundles patched.
export {
  SelfManagedCertificates,
  type SelfManagedCertificatesOptions,
  type ServingPair,
} from './self-managed-certificates.js';
export type { KeyPair } from '@nestor/core';
export { injectCaBundle, type CaBundleTarget, type InjectionResult, type ApiTransport } from './ca-bundle-injection.js';
export { renewedCertificateSecret, type CertificateSecretData, type RenewalPolicy } from './certificate-secret.js';
export { ReviewLimitError, type ReviewEnvelopeFields } from './json-scanner.js';
export {
  DEFAULT_BODY_IDLE_TIMEOUT_MS,
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_MAX_BODY_BYTES_IN_FLIGHT,
  DEFAULT_MAX_REVIEW_CONTAINERS,
  DEFAULT_MAX_REVIEWS_IN_FLIGHT,
} from './review-intake.js';
