// The public API of @nestor/core: what every layer above (client, runtime, the Nest module,
// @nestor/testing) talks to the API server with, and the seams they share.
import './node-version.js'; // first: refuses a Node.js older than the packages run on

export { Transport } from './transport.js';
export { DEFAULT_RETRY_AFTER_ATTEMPTS } from './retry-after.js';
export type { TransportOptions } from './transport-options.js';
export type {
  Query,
  RequestOptions,
  StreamOptions,
  StreamedTransportResponse,
  TransportResponse,
} from './transport-requests.js';
export { KubeApiError, describeRequest, retryAfterMs, type FailedRequest, type KubeStatus } from './errors.js';
export { JsonLineDecoder } from './json-lines.js';
export { JsonListDecoder } from './json-list-stream.js';
// The byte rules of JSON scanning, which the webhooks' review scanner shares (not re-exported by the operator).
export * as jsonBytes from './json-bytes.js';
export { ObjectTooDeepError, type RefusedObject } from './object-depth.js';
export { ClusterConfig, type KubeConfigSource } from './cluster-config.js';
export { loadKubeConfig, type KubeConfigSearch } from './load-kube-config.js';
export { Connectivity, isUnreachable, type ConnectivityListener } from './connectivity.js';
export { listPages, type ListPage, type ListPagesOptions, type ListTransport } from './list-pages.js';
export {
  isBuiltInKind,
  loadProtobufSchema,
  ProtobufSchema,
  type MessageSpec,
  type ProtobufSchemaTable,
  type FieldSpec,
} from './protobuf/schema.js';
export type { PlainObjectConstructor } from './protobuf/plain-object.js';
export {
  decodeEnveloped,
  decodeList as decodeProtobufList,
  type DecodedObject,
  type DecodedList,
  PROTOBUF_ACCEPT,
  PROTOBUF_WATCH_ACCEPT,
} from './protobuf/envelope.js';
export { METADATA_LIST_ACCEPT, METADATA_WATCH_ACCEPT } from './metadata-only.js';
export { ProtobufWatchDecoder, type DecodedWatchEvent } from './protobuf/watch-frames.js';
export { ProtobufListDecoder } from './protobuf/list-stream.js';
export { ProtobufDecodeError } from './protobuf/wire-reader.js';
export { servedResources, whyNotServed } from './discovery.js';
export {
  installCustomResourceDefinitions,
  type InstallableCustomResourceDefinition,
  type InstallCustomResourcesOptions,
} from './crd-installer.js';
export { apiVersionOf, resourceName, resourcePath, type ResourceDescriptor } from './resource.js';
export { withoutManagedFields, type KubeObject, type ObjectMeta, type OwnerReference } from './kube-object.js';
export { keyOf, refOf, refOfObject, type ObjectRef } from './object-ref.js';
export { type Clock, type TimerHandle, systemClock, idleWithin } from './clock.js';
export { ManualClock, seededRandom } from './testing-clock.js';
export { type RuntimeLogger, silentLogger, consoleLogger } from './logger.js';
export { sleep } from './sleep.js';
export * from './defaults.js';
export { retryWhileUnreachable, type RetryUnreachableOptions } from './retry-unreachable.js';
export { sleepUntilReady, type SleepUntilReadyOptions } from './sleep-until-ready.js';
export { resendWhenReady, SentDuringOutage } from './resend-when-ready.js';
export {
  certificateAuthority,
  certificateAuthorityFrom,
  renewalTime,
  selfSignedCertificate,
  splitPem,
  type CertificateAuthority,
  type KeyPair,
  type CertificateAuthorityOptions,
  type SelfSignedCertificate,
  type SelfSignedOptions,
} from './self-signed-certificate.js';
export { refreshCertificate, type CertificateRefreshOptions } from './certificate-refresh.js';
