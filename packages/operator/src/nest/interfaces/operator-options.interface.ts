import type { KubeConfigSource, KubeObject, TransportOptions } from '@nestor/core';
import type { ClassType } from '../../crd/field.decorator.js';
import type { ResourceType } from '../../crd/custom-resource.decorator.js';
import type { LeaseTiming } from '../../runtime/lease-timing.js';

export interface OperatorModuleOptions {
  /**
   * Where to find the cluster: a `ClusterConfig` or client-node `KubeConfig`, a kubeconfig
   * file path, or nothing for the usual order (in-cluster service account, then KUBECONFIG,
   * then ~/.kube/config).
   */
  kubeConfig?: KubeConfigSource | string;
  /**
   * Options of the connection to the API server, e.g. `{ protobuf: false }` to list and
   * watch built-in kinds in JSON (controller-runtime's ContentType), `{ http2: true }`.
   */
  transport?: TransportOptions;
  /** Watch only these namespaces (default: all). One namespace is the common case. */
  namespace?: string;
  /** Reconciles running at once across all controllers (default 16). */
  concurrency?: number;
  /** Field manager for server-side apply and writes (default 'nestor'). */
  fieldManager?: string;
  /** Bound on the wait for the caches' first sync at start-up (default 120 s). */
  cacheSyncTimeoutMs?: number;
  /** What every informer of the shared cache does with objects (controller-runtime's cache.Options). */
  cache?: CacheOptions;
  /** How long running reconciles may take to finish at shutdown (default 30 s). */
  shutdownGraceMs?: number;
  /** Do not start the manager on bootstrap (tests that drive it by hand). */
  manualStart?: boolean;
  /**
   * For development and tests: server-side apply CRDs at start-up and wait until they are
   * Established and served, before the kinds are checked and watched. `true`: the CRDs of
   * every `@CustomResource` kind the controllers use (their kind, owned and watched kinds);
   * a list: the CRDs of these `@CustomResource` classes. Off by default: in production apply
   * the CRDs `nestor manifests` writes, so the operator needs no rights on CRDs.
   */
  installCustomResources?: boolean | ClassType[];
  /**
   * Prometheus metrics on GET /metrics: by default over HTTPS on 0.0.0.0:8443, for callers
   * whose bearer token the API server accepts and whose user may `get` the non-resource URL
   * /metrics, as controller-runtime's secure metrics serving.
   */
  metrics?: MetricsServerOptions;
  /** Kubelet probes GET /healthz and /readyz, plain HTTP, no authentication (default 0.0.0.0:8081). */
  health?: HealthServerOptions;
  /** Run controllers on one replica at a time, elected through a coordination.k8s.io Lease. */
  leaderElection?: LeaderElectionOptions;
  /**
   * Spread the objects over the replicas: each holds a shard Lease and caches and
   * reconciles only the objects labelled for its shard; the elected leader assigns them by
   * consistent hashing and moves them when shards come and go. `true` for the defaults.
   * Controllers marked `sharded: false` run on the leader over every object.
   */
  sharding?: ShardingModuleOptions | boolean;
  /**
   * The HTTPS server for the `@Webhook` classes (started only when there is one): default
   * 0.0.0.0:9443 with the certificate in /tmp/k8s-webhook-server/serving-certs, as
   * controller-runtime.
   */
  webhooks?: WebhookServerOptions;
  /**
   * Fill what these options leave out from kubebuilder's manager flags and their
   * environment variables, so a deployment configures the operator without code (default
   * true): `--kubeconfig`, `--namespace` / `WATCH_NAMESPACE`, `--leader-elect` /
   * `LEADER_ELECT` with `--leader-election-id` / `LEADER_ELECTION_ID`,
   * `--metrics-bind-address` / `METRICS_BIND_ADDRESS` (`:8443`, `0` = off), `--metrics-secure`,
   * `--metrics-cert-path`, `--health-probe-bind-address` / `HEALTH_PROBE_BIND_ADDRESS`,
   * `--webhook-port`, `--webhook-cert-path`. What is set here wins; a flag wins over its variable.
   */
  readFlags?: boolean;
}

export interface WebhookServerOptions {
  /** Default 9443; 0 turns the webhook server off. */
  port?: number;
  /** Address to listen on (default 0.0.0.0: the API server calls the pod IP through a Service). */
  host?: string;
  /**
   * The directory with the serving certificate and key (default
   * /tmp/k8s-webhook-server/serving-certs, where kubebuilder's Deployment mounts cert-manager's
   * Secret), read again when they change. The API server trusts it through the
   * configurations' caBundle.
   */
  certDir?: string;
  /** File names in certDir (default tls.crt and tls.key). */
  certName?: string;
  keyName?: string;
  /** Larger request bodies get HTTP 413 (default 7 MiB, as controller-runtime: twice the API server's 3 MiB object limit, plus 1 MiB). */
  maxBodyBytes?: number;
  /**
   * Reviews read or answered at once (default 64); more get HTTP 429 with Retry-After, which
   * the API server retries within the webhook's timeout. Bounds the memory reviews take.
   */
  maxReviewsInFlight?: number;
  /** Body bytes held by all reviews in flight together (default 64 MiB); past it, HTTP 503 with Retry-After. */
  maxBodyBytesInFlight?: number;
  /**
   * Objects and arrays in one review (default 250,000), counted as the body arrives: a
   * review with more is refused unparsed (denied, or `Failure` for a conversion), as it
   * would take far more memory than its size. Nesting deeper than 1,000 is refused the same way.
   */
  maxReviewContainers?: number;
  /**
   * Where the serving certificate comes from. 'files' (default): certDir, where cert-manager's
   * Secret is mounted and its cainjector fills the caBundles. 'self-managed': the operator
   * keeps a CA and a certificate in a Secret of its namespace, renews them, and patches the
   * caBundle of its webhook configurations and CRD conversions (see `selfManaged`); /readyz
   * waits for the patch. `--webhook-certificates` / `WEBHOOK_CERTIFICATES` set it too.
   */
  certificates?: 'files' | 'self-managed';
  /** The self-managed mode's names; the defaults are kubebuilder's, `nestor manifests` sets them in the Deployment. */
  selfManaged?: SelfManagedCertificateOptions;
  /**
   * Run the application's global guards, interceptors and filters (`useGlobalGuards`,
   * `APP_GUARD`, ...) on admission handlers too (default false, as a Nest hybrid
   * application's second transport). Those declared on a `@Webhook` class or method always run.
   */
  inheritAppConfig?: boolean;
  /**
   * Offer HTTP/2 by ALPN beside HTTP/1.1 (default false, as kubebuilder's scaffold since
   * the HTTP/2 rapid-reset advisories). kube-apiserver calls a webhook over HTTP/1.1
   * unless it negotiates HTTP/2; measured in docs/BENCHMARKS.md ("Webhooks").
   */
  http2?: boolean;
}

export interface SelfManagedCertificateOptions {
  /** The Secret holding the CA and the certificate (default 'webhook-server-cert', as kubebuilder's; env WEBHOOK_SECRET_NAME). */
  secretName?: string;
  /** Its namespace (default: POD_NAMESPACE, the in-cluster namespace, the module's namespace, else 'default'). */
  namespace?: string;
  /**
   * The webhook Service (default 'webhook-service'; env WEBHOOK_SERVICE_NAME): the certificate
   * names `<service>.<namespace>.svc` and `<service>.<namespace>.svc.cluster.local`.
   */
  serviceName?: string;
  /** More names for the certificate: the host of a `url` clientConfig (a test's 127.0.0.1). */
  hosts?: string[];
  /**
   * The Validating and MutatingWebhookConfiguration whose caBundle is patched, for the types
   * the application serves (default 'nestor-webhooks', as webhookConfigurationsOf; env
   * WEBHOOK_CONFIGURATION_NAME).
   */
  configurationName?: string;
  /**
   * More CRDs (`<plural>.<group>`) whose `spec.conversion.webhook` caBundle is patched, when
   * their strategy is Webhook, beyond those of the `@Conversion` classes, which always are
   * (env WEBHOOK_CONVERSION_CRDS, comma-separated).
   */
  conversionCustomResourceDefinitions?: string[];
  /** Serving certificate lifetime (default one year), renewed when a third of it is left. */
  validityMs?: number;
  renewBeforeMs?: number;
  /** CA lifetime (default ten years); a new CA joins the bundle before the old one would expire. */
  caValidityMs?: number;
  /** How often the Secret and the caBundles are checked again (default 5 minutes). */
  checkIntervalMs?: number;
}

export interface MetricsServerOptions {
  /** Default 8443 (8080 with `secure: false`), kubebuilder's; 0 turns /metrics off. */
  port?: number;
  /** Address to listen on (default 0.0.0.0: Prometheus scrapes the pod IP). */
  host?: string;
  /**
   * HTTPS (default true). `false` serves plain HTTP without authentication, for development
   * or behind a proxy that authenticates (anyone who reaches the port reads the metrics).
   */
  secure?: boolean;
  /**
   * Authenticate each caller with a TokenReview and authorize it with a SubjectAccessReview
   * for `get` on /metrics (default: on when secure; needs HTTPS). The operator's identity
   * needs `create` on tokenreviews and subjectaccessreviews, as `nestor manifests` grants.
   */
  auth?: boolean;
  /**
   * A directory with the serving certificate and key (e.g. a mounted cert-manager Secret),
   * read again when they change. Default: a self-signed certificate made at start-up.
   */
  certDir?: string;
  /** File names in certDir (default tls.crt and tls.key). */
  certName?: string;
  keyName?: string;
}

export interface HealthServerOptions {
  /** Default 8081; 0 turns the probes off. It may equal the metrics port only when metrics are plain HTTP. */
  port?: number;
  /** Address to listen on (default 0.0.0.0: the kubelet probes the pod IP). */
  host?: string;
}

/** The Lease timing defaults as controller-runtime's: 15 s, 10 s, 2 s. */
export interface LeaderElectionOptions extends LeaseTiming {
  /** The Lease's name, shared by the operator's replicas. */
  id: string;
  /** The Lease's namespace (default: POD_NAMESPACE, the in-cluster namespace, the module's namespace, else 'default'). */
  namespace?: string;
  /** This replica's identity (default: hostname + random suffix). */
  identity?: string;
  /**
   * On losing the lease the running reconciles are aborted at once; then the process exits
   * ('exit', the default, as controller-runtime) or stops reconciling, stands by with warm
   * caches and campaigns again ('stop'). Either way KubeClient refuses writes once the
   * lease may have expired.
   */
  onLost?: 'exit' | 'stop';
}

/**
 * Built-in sharding: each replica reconciles its share of every controller's objects (see
 * docs/sharding.md). Needs `leaderElection`: the leader assigns objects to shards.
 */
/** The shard Leases' timing defaults to leader election's. */
export interface ShardingModuleOptions extends LeaseTiming {
  /** Names the shard labels (`shard.nestor.dev/<ring>`) and groups the shard Leases (default: the leader election id). */
  ring?: string;
  /** This replica's shard id (default: POD_NAME, else the hostname: a pod's name). */
  shardId?: string;
  /** Replicas of the Deployment `nestor manifests` writes (default 3); each is a shard. */
  replicas?: number;
  /** Ring tokens per shard (default 100). */
  tokensPerShard?: number;
  /** The leader's full rebalance pass this often (default 5 min), besides membership changes. */
  resyncMs?: number;
}

/** The shared informer cache's settings, for every kind it holds. */
export interface CacheOptions {
  /**
   * Applied to each object as it is decoded, before it is stored and handed to anyone
   * (controller-runtime's DefaultTransform): drop what no reconciler reads, e.g. large
   * annotations or a Secret's data, to save memory. It runs once per object per informer,
   * gets the freshly decoded object (change it in place or return another) and must not keep
   * it. managedFields are stripped already.
   */
  transform?: (object: KubeObject) => KubeObject;
  /**
   * Re-deliver every cached object to the controllers this often, as an update whose old and
   * new object are the same (controller-runtime's SyncPeriod; default never). Each period is
   * jittered by up to 10 %, so informers do not resync together. A `generationChanged`
   * predicate drops these updates, as in controller-runtime; use `requeueAfter` for
   * periodic work on one object.
   */
  resyncPeriodMs?: number;
  /**
   * Settings for one kind's informers, over the ones above (controller-runtime's ByObject):
   * a transform that drops a Secret's data, say, or a resync period for one kind only.
   *
   * ```ts
   * cache: { byKind: [{ kind: Secret, transform: (s) => ({ ...s, data: undefined }) }] }
   * ```
   */
  byKind?: KindCacheOptions[];
}

/** One kind's cache settings: see {@link CacheOptions.byKind}. */
export interface KindCacheOptions {
  /** A built-in kind's descriptor (`Secret`) or a `@CustomResource` class. */
  kind: ResourceType;
  /** This kind's transform, in place of the module-wide one. */
  transform?: (object: KubeObject) => KubeObject;
  /** This kind's resync period, in place of the module-wide one; 0 turns resync off for it. */
  resyncPeriodMs?: number;
}
