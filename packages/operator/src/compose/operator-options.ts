import type { KubeConfigSource, KubeObject, TransportOptions } from '@nestor/core';
import type { ClassType } from '../crd/field.decorator.js';
import type { ResourceType } from '../crd/custom-resource.decorator.js';
import type { LeaseTiming } from '../runtime/leases/lease-timing.js';
import type { FleetOptions } from '../runtime/fleet/fleet.js';
import type { StorageMigrationOptions } from '../upgrades/storage-version-migration.js';
import type { KeepChoice } from '../runtime/cache/keep-choice.js';
import type { HeapReleaseOptions } from '../runtime/manager/heap-release.js';
import type {
  HealthServerOptions,
  MetricsServerOptions,
  SelfManagedCertificateOptions,
  WebhookServingOptions,
} from '../serving/serving-options.js';

// The listening sockets' settings belong to the serving layer; the module takes them as they are.
export type { HealthServerOptions, MetricsServerOptions, SelfManagedCertificateOptions };

/**
 * What an operator is made of, for `createOperator` and `OperatorModule.forRoot` alike: the
 * cluster, leader election, the servers, the cache, sharding, webhooks.
 */
export interface OperatorOptions {
  /**
   * Where to find the cluster: a `ClusterConfig` or client-node `KubeConfig`, a kubeconfig
   * file path, or nothing for the usual order (in-cluster service account, then KUBECONFIG,
   * then ~/.kube/config).
   */
  kubeConfig?: KubeConfigSource | string;
  /**
   * Options of the connection to the API server, e.g. `{ protobuf: false }` to list and
   * watch built-in kinds in JSON (controller-runtime's ContentType), `{ http2: false }` for
   * HTTP/1.1 pools instead of HTTP/2.
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
  /**
   * Give back to the OS, once idle, what start-up, a LIST or a burst grew (needs
   * `node --expose-gc`, as the generated Deployment runs; docs/production.md, "Memory").
   * `false`: never. Default: look every 5 s.
   */
  heapRelease?: HeapReleaseOptions | false;
  /** Do not start the manager on bootstrap (tests that drive it by hand). Nest only. */
  manualStart?: boolean;
  /**
   * For development and tests: server-side apply CRDs at start-up and wait until they are
   * Established and served, before the kinds are checked and watched. `true`: the CRDs of
   * every `@CustomResource` kind the controllers use (their kind, owned and watched kinds);
   * a list: the CRDs of these `@CustomResource` classes. Off by default: in production apply
   * the CRDs `nestor manifests` writes, so the operator needs no rights on CRDs. Nest only.
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
   * Member clusters besides the operator's own (docs/multicluster.md): where they come from
   * (`KubeconfigSecrets`, `StaticClusters`, a provider of your own) and how they are engaged.
   * Controllers choose them with `clusters`; the injectable `Fleet` gives their clients.
   */
  fleet?: FleetOptions;
  /**
   * The HTTPS server for the `@Webhook` classes (started only when there is one): default
   * 0.0.0.0:9443 with the certificate in /tmp/k8s-webhook-server/serving-certs, as
   * controller-runtime.
   */
  webhooks?: WebhookServerOptions;
  /**
   * Storage-version migration (docs/upgrades.md): while this replica leads, each CRD of the
   * operator's own kinds (the `@CustomResource` kinds its controllers use, and those
   * `installCustomResources` lists) whose `status.storedVersions` lists more than its
   * storage version gets every object, in every namespace, rewritten in the storage
   * version, then `storedVersions` trimmed to it, so that a later release may drop the old
   * versions. It needs the rights `nestor manifests` writes (the ClusterRole
   * `<name>-storage-migration`). On by default when the operator watches every namespace;
   * off when it watches one (`namespace`), whose rights stop there: `true` or an object
   * turns it on (and its rights into the manifests), `false` off (run `nestor
   * migrate-storage` as a Job instead); an object sets its pace or names the CRDs.
   */
  migrateStorageVersions?: boolean | StorageVersionMigrationOptions;
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

/** How the operator's leader migrates its CRDs' objects to their storage version: see {@link OperatorOptions.migrateStorageVersions}. */
export interface StorageVersionMigrationOptions extends StorageMigrationOptions {
  /**
   * The kinds whose CRDs to keep migrated, in place of the operator's own: `@CustomResource`
   * classes or CRD names (`widgets.example.com`).
   */
  kinds?: ReadonlyArray<ClassType | string>;
  /** How long before a migration that failed or ended incomplete is tried again (default 5 min). */
  retryMs?: number;
}

/** The webhook HTTPS server of OperatorModule: port, certificates, limits. */
export interface WebhookServerOptions extends WebhookServingOptions {
  /**
   * Run the application's global guards, interceptors and filters (`useGlobalGuards`,
   * `APP_GUARD`, ...) on admission handlers too (default false, as a Nest hybrid
   * application's second transport). Those declared on a `@Webhook` class or method always run.
   */
  inheritAppConfig?: boolean;
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
   * lease may have expired. A lease that lapsed only because the API server did not answer
   * (the Lease still names this replica) is taken back when it answers, with either
   * setting; the process exits then only if another replica holds it.
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
  /**
   * What the informers of owned and watched kinds keep, when their controller does not say
   * (`owns: [{ resource, keep }]`, `@Watches(kind, { keep })`; a controller's own kind keeps
   * its objects always). Left out: a skeleton per object (name, namespace, resourceVersion,
   * generation, labels, owner references: what maps an event to its requests), as kube-rs
   * keeps nothing of an owned kind, until a read from the cache (`kube.get`, `kube.list`)
   * asks for the kind: that first read makes its informer keep the objects, and waits until
   * it holds them all. 'objects' keeps them from the start, as controller-runtime;
   * 'metadata' their metadata; 'none' a skeleton for good (reads go to the API server).
   * `nestor_cache_objects{resource,mode}` says what each kind keeps.
   */
  keep?: KeepChoice;
}

/** One kind's cache settings: see {@link CacheOptions.byKind}. */
export interface KindCacheOptions {
  /** A built-in kind's descriptor (`Secret`) or a `@CustomResource` class. */
  kind: ResourceType;
  /** This kind's transform, in place of the module-wide one. */
  transform?: (object: KubeObject) => KubeObject;
  /** This kind's resync period, in place of the module-wide one; 0 turns resync off for it. */
  resyncPeriodMs?: number;
  /** What this kind's informers keep where it is owned or watched, in place of the module-wide `keep`. */
  keep?: KeepChoice;
}

/** What `OperatorModule.forRoot` takes: the same as `createOperator`. */
export type OperatorModuleOptions = OperatorOptions;
