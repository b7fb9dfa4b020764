export { TestEnvironment } from './environment.js';
export type { TestEnvironmentOptions } from './environment-options.js';
export type { EtcdEntry } from './etcd-faults.js';
export type { ThrottledSubject } from './flow-control-throttle.js';
export {
  FakeNodes,
  FAKE_NODE_ANNOTATION,
  FAKE_NODE_LABEL,
  type FakeNodeObject,
  type FakeNodeOptions,
  type FakePodObject,
  type PodFailure,
  type PodRef,
} from './fake-nodes.js';
export { ensureKwok, KWOK_VERSION, kwokCacheDir, type KwokBinaryOptions } from './kwok-binary.js';
export { LocalWebhooks, type WebhookInstallOptions, type WebhookConfigurationObject } from './webhooks.js';
export { ApiClient } from './api-client.js';
export type { Authentication } from './admin-identity.js';
export { importedCrds, loadCustomResourceDefinitions, type CrdSource, type CustomResourceDefinition } from './crds.js';
export {
  buildControlPlane,
  controlPlaneCacheDir,
  ensureControlPlaneBinaries,
  kubernetesVersion,
  type ControlPlaneBinaries,
  type ControlPlaneSource,
  type EnsureBinariesOptions,
} from './controlplane-binaries.js';
export {
  startSharedControlPlane,
  stopSharedControlPlane,
  type SharedControlPlane,
  type SharedControlPlaneOptions,
} from './shared-control-plane.js';
export {
  DEFAULT_ENVTEST_INDEX_URL,
  envtestPlatform,
  type EnvtestArchive,
  type EnvtestPlatform,
} from './envtest-index.js';
export {
  downloadEnvtestBinaries,
  envtestCacheDir,
  EnvtestVersionUnavailable,
  type EnvtestDownloadOptions,
} from './envtest-download.js';
export { ensureHelm, helmCacheDir, helmVersion, type EnsureHelmOptions } from './helm-binary.js';
export {
  ensureOlmValidator,
  olmApiVersion,
  olmValidatorCacheDir,
  validateOlmBundle,
  type EnsureOlmValidatorOptions,
  type OlmFinding,
  type OlmValidation,
} from './olm-validator.js';
export { waitFor, type WaitForOptions } from './wait-for.js';
export { parallel } from './parallel.js';
export { TcpRelay } from './tcp-relay.js';
export {
  ApiProxy,
  type ApiProxyOptions,
  type InjectedFault,
  type ProxiedRequest,
  type ProxyFault,
  type ProxyRule,
} from './api-proxy.js';
export type { AuditEvent } from './audit-log.js';
export { freePort } from './ports.js';
