import { randomBytes } from 'node:crypto';
import { readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { installCustomResourceDefinitions, KubeApiError, sleep } from '@nestor/core';
import { ApiClient } from './api-client.js';
import { auditLogFlags, readAuditLog, type AuditEvent } from './audit-log.js';
import { ensureControlPlaneBinaries, type ControlPlaneBinaries } from './controlplane-binaries.js';
import {
  createAdminIdentity,
  createServiceAccountKey,
  type AdminIdentity,
  type Authentication,
} from './credentials.js';
import { loadCustomResourceDefinitions, type CrdSource } from './crds.js';
import { FakeNodes, isUsable } from './fake-nodes.js';
import {
  NODE_API_SERVER_FLAGS,
  NODE_CONTROLLER_MANAGER_FLAGS,
  NODE_CONTROLLERS,
  startNodeComponents,
} from './node-components.js';
import { assertPortFree, freePort } from './ports.js';
import { ControlPlaneProcess, type ProcessOptions } from './process.js';
import { TcpRelay } from './tcp-relay.js';
import { LocalWebhooks, type WebhookInstallOptions } from './webhooks.js';

export interface TestEnvironmentOptions {
  /** CRDs to install once the API server is ready: objects, YAML/JSON files or folders of them. */
  crds?: CrdSource[];
  /**
   * Start kube-controller-manager too: `true` for the garbage collector, namespace,
   * Deployment and ReplicaSet controllers, or the list of controllers to run.
   */
  controllerManager?: boolean | string[];
  /**
   * Fake Nodes, as many as given: kwok runs them (pods go Running and Ready, Job pods
   * complete) and kube-scheduler places pods on them; kube-controller-manager runs with the
   * workload and node controllers (Jobs, StatefulSets, DaemonSets, node health, evictions).
   * Faults through `env.nodes`. With an existing cluster (USE_EXISTING_CLUSTER, the shared
   * control plane), waits until it has this many fake nodes ready instead of starting any.
   */
  nodes?: number;
  /** How the admin user authenticates (default 'token'). */
  authentication?: Authentication;
  /** Copy the control plane's output to stderr (default: KUBEBUILDER_ATTACH_CONTROL_PLANE_OUTPUT). */
  attachControlPlaneOutput?: boolean;
  /** Bound on start-up (default: KUBEBUILDER_CONTROLPLANE_START_TIMEOUT or 60 s). */
  startTimeoutMs?: number;
  /** Bound on each process's graceful stop before SIGKILL (default: KUBEBUILDER_CONTROLPLANE_STOP_TIMEOUT or 20 s). */
  stopTimeoutMs?: number;
  /** Use the cluster KUBECONFIG names instead of starting one (default: USE_EXISTING_CLUSTER). */
  useExistingCluster?: boolean;
  /** Fixed ports (default: free ones). */
  apiServerPort?: number;
  etcdPort?: number;
  /** Extra kube-apiserver flags, e.g. ['--watch-cache=false']. */
  apiServerFlags?: string[];
  /**
   * kube-apiserver reaches etcd through a TcpRelay (`etcdRelay`), for storage faults: a slow
   * etcd (`etcdRelay.slow(ms)`), or one cut off (`partition()`). Default false.
   */
  etcdRelay?: boolean;
  /**
   * Turn on the API server's audit log: every write (not reads), at Metadata level, the
   * record of who wrote what and when for fault tests. Read it with auditEvents().
   */
  auditLog?: boolean;
  /** Where progress of a first control-plane build goes (default: stderr). */
  onProgress?: (line: string) => void;
}

const DEFAULT_CONTROLLERS = [
  'garbage-collector-controller',
  'namespace-controller',
  'deployment-controller',
  'replicaset-controller',
  'serviceaccount-controller',
];

/** Parses envtest's duration variables: Go durations ("90s", "2m") or bare seconds. */
function durationMs(value: string | undefined, fallbackMs: number): number {
  if (!value) return fallbackMs;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(value.trim());
  if (!match) throw new Error(`cannot read the duration "${value}": write it as 90s, 2m or 500ms`);
  const n = Number(match[1]);
  return match[2] === 'ms' ? n : match[2] === 'm' ? n * 60_000 : n * 1000;
}

function flag(value: string | undefined): boolean {
  return value !== undefined && ['1', 'true', 'yes'].includes(value.toLowerCase());
}

interface OwnedControlPlane {
  dir: string;
  binaries: ControlPlaneBinaries;
  identity: AdminIdentity;
  etcd: ControlPlaneProcess;
  etcdUrl: string;
  etcdRelay?: TcpRelay;
  apiServer: ControlPlaneProcess;
  apiServerArgs: string[];
  processOptions: ProcessOptions;
  controllerManager?: ControlPlaneProcess;
  scheduler?: ControlPlaneProcess;
  kwok?: ControlPlaneProcess;
  auditLogPath?: string;
}

/**
 * A real etcd + kube-apiserver (+ kube-controller-manager) on loopback, as
 * controller-runtime's envtest starts them, honouring envtest's variables.
 *
 * ```ts
 * const env = await TestEnvironment.start({ crds: ['config/crd'] });
 * const kc = env.kubeConfig;           // @kubernetes/client-node KubeConfig
 * const ns = await env.createNamespace();
 * await env.stop();
 * ```
 */
export class TestEnvironment {
  private readonly namespaces = new Set<string>();
  private readonly webhooks: LocalWebhooks[] = [];
  private stopped = false;
  private fakeNodes?: FakeNodes;

  private constructor(
    /** The admin's KubeConfig for this control plane. */
    readonly kubeConfig: KubeConfig,
    /** A kubeconfig file for the same (for kubectl, or a second process). */
    readonly kubeconfigPath: string,
    /** The admin's JSON client, for set-up work in tests. */
    readonly client: ApiClient,
    private readonly options: Required<Pick<TestEnvironmentOptions, 'startTimeoutMs' | 'stopTimeoutMs'>>,
    private readonly owned?: OwnedControlPlane,
  ) {}

  /** The API server's URL. */
  get server(): string {
    return this.client.server;
  }

  /** True when this environment started its own control plane (false with USE_EXISTING_CLUSTER). */
  get ownsControlPlane(): boolean {
    return this.owned !== undefined;
  }

  static async start(options: TestEnvironmentOptions = {}): Promise<TestEnvironment> {
    const env = process.env;
    const settings = {
      startTimeoutMs: options.startTimeoutMs ?? durationMs(env.KUBEBUILDER_CONTROLPLANE_START_TIMEOUT, 60_000),
      stopTimeoutMs: options.stopTimeoutMs ?? durationMs(env.KUBEBUILDER_CONTROLPLANE_STOP_TIMEOUT, 20_000),
    };
    const useExisting = options.useExistingCluster ?? flag(env.USE_EXISTING_CLUSTER);
    const environment = useExisting
      ? await TestEnvironment.attach(settings)
      : await TestEnvironment.launch(options, settings);
    try {
      if (options.nodes) {
        environment.fakeNodes = new FakeNodes(environment.client, settings.startTimeoutMs);
        if (useExisting) await environment.waitForSharedNodes(options.nodes);
      }
      if (options.crds?.length) await environment.installCRDs(options.crds);
    } catch (error) {
      await environment.stop();
      throw error;
    }
    return environment;
  }

  private static async attach(settings: TestEnvironment['options']): Promise<TestEnvironment> {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromDefault();
    const path = process.env.KUBECONFIG?.split(':')[0];
    if (!kubeConfig.getCurrentCluster()) {
      throw new Error(
        'USE_EXISTING_CLUSTER is set but no cluster is configured: set KUBECONFIG to a kubeconfig file with a current-context',
      );
    }
    const client = await ApiClient.fromKubeConfig(kubeConfig);
    await waitReady(client, settings.startTimeoutMs, []);
    return new TestEnvironment(kubeConfig, path ?? join(process.env.HOME ?? '', '.kube', 'config'), client, settings);
  }

  private static async launch(
    options: TestEnvironmentOptions,
    settings: TestEnvironment['options'],
  ): Promise<TestEnvironment> {
    const attachOutput = options.attachControlPlaneOutput ?? flag(process.env.KUBEBUILDER_ATTACH_CONTROL_PLANE_OUTPUT);
    const processOptions: ProcessOptions = { attachOutput, stopTimeoutMs: settings.stopTimeoutMs };
    const nodes = options.nodes ?? 0;
    if (!Number.isInteger(nodes) || nodes < 0) {
      throw new Error(`nodes is ${options.nodes}: give the number of fake nodes to start, 0 or more`);
    }
    // Pods on nodes need the Deployment, ReplicaSet and node controllers.
    const wantsControllerManager = Boolean(options.controllerManager) || nodes > 0;
    const binaries = await ensureControlPlaneBinaries({
      onProgress: options.onProgress ?? ((line) => process.stderr.write(`[nestor controlplane] ${line}\n`)),
      controllerManager: wantsControllerManager,
      nodes: nodes > 0,
    });
    if (wantsControllerManager && !binaries.kubeControllerManager) {
      throw new Error(
        `kube-controller-manager was asked for, but ${binaries.origin} has none: add one there or set TEST_ASSET_KUBE_CONTROLLER_MANAGER`,
      );
    }
    if (options.apiServerPort) await assertPortFree(options.apiServerPort, 'API server');
    if (options.etcdPort) await assertPortFree(options.etcdPort, 'etcd');

    const dir = await mkdtemp(join(tmpdir(), 'nestor-env-'));
    const started: ControlPlaneProcess[] = [];
    let etcdRelay: TcpRelay | undefined;
    try {
      const [identity, saKey] = await Promise.all([
        createAdminIdentity(dir, options.authentication ?? 'token'),
        createServiceAccountKey(dir),
      ]);
      const etcdPort = options.etcdPort ?? (await freePort());
      let peerPort = await freePort();
      // Both ports are free but unbound until etcd starts, so the kernel may hand out one twice.
      while (peerPort === etcdPort) peerPort = await freePort();
      const etcdUrl = `http://127.0.0.1:${etcdPort}`;
      const etcd = new ControlPlaneProcess(
        'etcd',
        binaries.etcd,
        [
          `--data-dir=${join(dir, 'etcd')}`,
          `--listen-client-urls=${etcdUrl}`,
          `--advertise-client-urls=${etcdUrl}`,
          `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
          `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
          `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
          '--unsafe-no-fsync=true',
          '--log-level=warn',
        ],
        processOptions,
      );
      started.push(etcd);
      await waitFor(etcd, settings.startTimeoutMs, async () => {
        const response = await fetch(`${etcdUrl}/health`).catch(() => undefined);
        return response?.ok === true;
      });

      etcdRelay = options.etcdRelay ? await TcpRelay.start(etcdUrl) : undefined;
      const audit = options.auditLog ? await auditLogFlags(dir) : undefined;
      const port = options.apiServerPort ?? (await freePort());
      const certDir = join(dir, 'certs');
      const apiServerArgs = [
        `--etcd-servers=${etcdRelay?.httpUrl ?? etcdUrl}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        '--endpoint-reconciler-type=none',
        `--secure-port=${port}`,
        `--cert-dir=${certDir}`,
        '--authorization-mode=RBAC',
        '--service-cluster-ip-range=10.0.0.0/24',
        '--allow-privileged=true',
        '--service-account-issuer=https://nestor.test',
        `--service-account-key-file=${saKey.publicKey}`,
        `--service-account-signing-key-file=${saKey.privateKey}`,
        '--disable-admission-plugins=ServiceAccount',
        ...identity.apiServerFlags,
        ...(audit?.flags ?? []),
        ...(nodes > 0 ? NODE_API_SERVER_FLAGS : []),
        ...(options.apiServerFlags ?? []),
      ];
      const apiServer = new ControlPlaneProcess(
        'kube-apiserver',
        binaries.kubeApiServer,
        apiServerArgs,
        processOptions,
      );
      started.push(apiServer);
      // The API server writes its self-signed serving certificate (with its CA) on start.
      const caFile = join(certDir, 'apiserver.crt');
      // It writes the file in place (the serving certificate, then its CA): read it whole,
      // not while it is being written, or the kubeconfig trusts half of it.
      let ca = '';
      await waitFor(apiServer, settings.startTimeoutMs, async () => {
        const read = await readFile(caFile, 'utf8').catch(() => '');
        const whole = read !== '' && (read.split('-----END CERTIFICATE-----').length > 2 || read === ca);
        ca = read;
        return whole;
      });

      const kubeconfigPath = join(dir, 'kubeconfig');
      const kubeconfigYaml = kubeconfigFile(`https://127.0.0.1:${port}`, ca, identity);
      await writeFile(kubeconfigPath, kubeconfigYaml, { mode: 0o600 });
      const kubeConfig = new KubeConfig();
      kubeConfig.loadFromString(kubeconfigYaml);
      const client = await ApiClient.fromKubeConfig(kubeConfig);
      await waitReady(client, settings.startTimeoutMs, [apiServer]);

      let controllerManager: ControlPlaneProcess | undefined;
      if (wantsControllerManager && binaries.kubeControllerManager) {
        const asked = Array.isArray(options.controllerManager) ? options.controllerManager : DEFAULT_CONTROLLERS;
        const controllers = nodes > 0 ? [...new Set([...asked, ...NODE_CONTROLLERS])] : asked;
        controllerManager = new ControlPlaneProcess(
          'kube-controller-manager',
          binaries.kubeControllerManager,
          [
            `--kubeconfig=${kubeconfigPath}`,
            `--controllers=${controllers.join(',')}`,
            `--service-account-private-key-file=${saKey.privateKey}`,
            `--root-ca-file=${caFile}`,
            '--leader-elect=false',
            '--bind-address=127.0.0.1',
            '--secure-port=0',
            '--use-service-account-credentials=false',
            '--concurrent-gc-syncs=5',
            ...(nodes > 0 ? NODE_CONTROLLER_MANAGER_FLAGS : []),
          ],
          processOptions,
        );
        started.push(controllerManager);
      }

      let scheduler: ControlPlaneProcess | undefined;
      let kwok: ControlPlaneProcess | undefined;
      if (nodes > 0) {
        ({ scheduler, kwok } = await startNodeComponents({
          dir,
          kubeconfigPath,
          kubeScheduler: binaries.kubeScheduler!,
          kwok: binaries.kwok!,
          processOptions,
        }));
        started.push(scheduler, kwok);
        const fakeNodes = new FakeNodes(client, settings.startTimeoutMs);
        const names = Array.from({ length: nodes }, (_, i) => `kwok-node-${i}`);
        await Promise.all(names.map((name) => fakeNodes.create({ name })));
        // Usable: kwok reported them Ready and the node lifecycle controller lifted the
        // not-ready taint that nodes are created with.
        await waitUntil(
          started,
          settings.startTimeoutMs,
          async () => (await fakeNodes.list()).filter(isUsable).length >= nodes,
          `the ${nodes} fake nodes did not become ready`,
        );
      }

      return new TestEnvironment(kubeConfig, kubeconfigPath, client, settings, {
        dir,
        binaries,
        identity,
        etcd,
        etcdUrl,
        ...(etcdRelay ? { etcdRelay } : {}),
        apiServer,
        apiServerArgs,
        processOptions,
        ...(controllerManager ? { controllerManager } : {}),
        ...(scheduler ? { scheduler } : {}),
        ...(kwok ? { kwok } : {}),
        ...(audit ? { auditLogPath: audit.path } : {}),
      });
    } catch (error) {
      for (const proc of started.reverse()) await proc.stop();
      await etcdRelay?.close();
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
  }

  /** Installs CRDs and waits until they are Established and served. */
  async installCRDs(crds: CrdSource[]): Promise<void> {
    await installCustomResourceDefinitions(this.client.transport, await loadCustomResourceDefinitions(crds), {
      fieldManager: 'nestor-testing',
      timeoutMs: this.options.startTimeoutMs,
    });
  }

  /**
   * Installs webhook configurations pointing at a server on this machine, as envtest's
   * WebhookInstallOptions: each webhook's Service becomes `https://127.0.0.1:<port>/<path>`,
   * with a CA made for it as caBundle; the `conversions` CRDs convert through
   * `https://127.0.0.1:<port>/convert`. Serve the returned `certDir` on the returned port.
   * They are removed (conversions set back to None) by `uninstall()` or when the environment stops.
   */
  async installWebhooks(options: WebhookInstallOptions): Promise<LocalWebhooks> {
    const webhooks = await LocalWebhooks.install(this.client, options);
    this.webhooks.push(webhooks);
    return webhooks;
  }

  /** Creates a namespace with a unique name; it is deleted when the environment stops. */
  async createNamespace(prefix = 'test'): Promise<string> {
    const name = `${prefix}-${randomBytes(4).toString('hex')}`;
    await this.client.request('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name },
    });
    this.namespaces.add(name);
    return name;
  }

  /** Process ids of the control plane this environment runs (empty for an existing cluster). */
  get pids(): number[] {
    const o = this.owned;
    if (!o) return [];
    return [o.etcd.pid, o.apiServer.pid, o.controllerManager?.pid, o.scheduler?.pid, o.kwok?.pid].filter(
      (p): p is number => p !== undefined,
    );
  }

  /**
   * The fake nodes and their faults (see FakeNodes): a node NotReady, drained, a pod failed
   * or crash-looping. Needs `TestEnvironment.start({ nodes })`.
   */
  get nodes(): FakeNodes {
    if (!this.fakeNodes) throw new Error('env.nodes needs fake nodes: TestEnvironment.start({ nodes: 3 })');
    return this.fakeNodes;
  }

  private async waitForSharedNodes(count: number): Promise<void> {
    const nodes = this.fakeNodes!;
    try {
      // No fake node at all: the cluster runs none, and waiting would not bring any.
      if ((await nodes.list()).length === 0) throw new Error('the cluster has no fake nodes');
      await nodes.waitUsable(count, this.options.startTimeoutMs);
    } catch (error) {
      throw new Error(
        `${(error as Error).message}. This environment is attached to an existing cluster (USE_EXISTING_CLUSTER), ` +
          `which must run ${count} fake nodes: start the shared control plane with nodes (NESTOR_TEST_NODES=${count}, ` +
          `or startSharedControlPlane({ nodes: ${count} })), or pass { useExistingCluster: false } for a control plane of its own`,
        { cause: error },
      );
    }
  }

  /**
   * Fault handle: stops kube-apiserver (SIGTERM, or SIGKILL with `{ kill: true }`) and
   * starts it again on the same port with the same etcd, so the data survives and
   * clients see their connections drop.
   */
  async restartApiServer(options: { kill?: boolean; downtimeMs?: number } = {}): Promise<void> {
    const owned = this.requireOwned('restartApiServer');
    if (options.kill) await owned.apiServer.kill();
    else await owned.apiServer.stop();
    if (options.downtimeMs) await sleep(options.downtimeMs);
    owned.apiServer = new ControlPlaneProcess(
      'kube-apiserver',
      owned.binaries.kubeApiServer,
      owned.apiServerArgs,
      owned.processOptions,
    );
    await waitReady(this.client, this.options.startTimeoutMs, [owned.apiServer]);
  }

  /**
   * The API server's serving certificate and key (self-signed; what the kubeconfig trusts):
   * an ApiProxy serving them stands in for the server without any client noticing.
   */
  async apiServerCertificate(): Promise<{ cert: string; key: string }> {
    const certDir = join(this.requireOwned('apiServerCertificate').dir, 'certs');
    const [cert, key] = await Promise.all([
      readFile(join(certDir, 'apiserver.crt'), 'utf8'),
      readFile(join(certDir, 'apiserver.key'), 'utf8'),
    ]);
    return { cert, key };
  }

  /**
   * Fault handle: API Priority and Fairness serves the requests of `subject` (a user, or
   * every ServiceAccount of a namespace) one at a time and answers the others at once with
   * 429 and `Retry-After: 1`, as an overloaded API server does. `resources` narrows it
   * (default: every resource). It takes effect on the running server (a FlowSchema and a
   * PriorityLevelConfiguration; nothing restarts). Returns the function that lifts it.
   */
  async throttle(
    subject: { user: string } | { serviceAccountsOf: string },
    resources: Array<{ apiGroup: string; resource: string }> = [{ apiGroup: '*', resource: '*' }],
  ): Promise<() => Promise<void>> {
    const base = '/apis/flowcontrol.apiserver.k8s.io/v1';
    const name = `nestor-throttle-${randomBytes(4).toString('hex')}`;
    // Shares 0, nothing lent or borrowed: the level's one seat, no queue.
    await this.client.request('POST', `${base}/prioritylevelconfigurations`, {
      metadata: { name },
      spec: {
        type: 'Limited',
        limited: {
          nominalConcurrencyShares: 0,
          lendablePercent: 0,
          borrowingLimitPercent: 0,
          limitResponse: { type: 'Reject' },
        },
      },
    });
    const subjects =
      'user' in subject
        ? [{ kind: 'User', user: { name: subject.user } }]
        : [{ kind: 'ServiceAccount', serviceAccount: { namespace: subject.serviceAccountsOf, name: '*' } }];
    await this.client.request('POST', `${base}/flowschemas`, {
      metadata: { name },
      spec: {
        priorityLevelConfiguration: { name },
        // Before every built-in FlowSchema but exempt (1) and probes (2).
        matchingPrecedence: 100,
        distinguisherMethod: { type: 'ByUser' },
        rules: [
          {
            subjects,
            resourceRules: resources.map(({ apiGroup, resource }) => ({
              verbs: ['*'],
              apiGroups: [apiGroup],
              resources: [resource],
              clusterScope: true,
              namespaces: ['*'],
            })),
          },
        ],
      },
    });
    // The API server's flow-control controller marks the FlowSchema once it has taken it in.
    await waitUntil(
      [],
      this.options.startTimeoutMs,
      async () => {
        const schema = await this.client.request<{ status?: { conditions?: Array<{ type: string }> } }>(
          'GET',
          `${base}/flowschemas/${name}`,
        );
        return schema.status?.conditions?.some((c) => c.type === 'Dangling') === true;
      },
      `the FlowSchema ${name} was not taken in`,
    );
    return async () => {
      for (const kind of ['flowschemas', 'prioritylevelconfigurations']) {
        await this.client.request('DELETE', `${base}/${kind}/${name}`).catch((error: unknown) => {
          if (!(error instanceof KubeApiError && error.status === 404)) throw error;
        });
      }
    };
  }

  /** The relay between kube-apiserver and etcd (see the `etcdRelay` option). */
  get etcdRelay(): TcpRelay {
    const relay = this.requireOwned('etcdRelay').etcdRelay;
    if (!relay) throw new Error('etcdRelay needs TestEnvironment.start({ etcdRelay: true })');
    return relay;
  }

  /** The API server's audit log so far: every write (see the auditLog option). */
  async auditEvents(): Promise<AuditEvent[]> {
    const path = this.requireOwned('auditEvents').auditLogPath;
    if (!path) throw new Error('auditEvents() needs TestEnvironment.start({ auditLog: true })');
    return readAuditLog(path);
  }

  /**
   * Fault handle: compacts etcd's history up to its current revision, so any watch from
   * an older resourceVersion fails with 410 Gone. Returns the compacted revision.
   *
   * kube-apiserver's watch cache keeps its own history and would go on serving watches
   * from compacted resourceVersions, so this restarts kube-apiserver too (as
   * restartApiServer does), unless it runs with `--watch-cache=false` or
   * `{ restartApiServer: false }` is passed.
   */
  async compactEtcd(options: { restartApiServer?: boolean } = {}): Promise<number> {
    const owned = this.requireOwned('compactEtcd');
    const post = async <T>(path: string, body: unknown): Promise<T> => {
      const response = await fetch(`${owned.etcdUrl}${path}`, { method: 'POST', body: JSON.stringify(body) });
      if (!response.ok) throw new Error(`etcd ${path}: HTTP ${response.status}: ${await response.text()}`);
      return (await response.json()) as T;
    };
    // A write moves the revision past every object's, so all of them are compacted.
    const put = await post<{ header: { revision: string } }>('/v3/kv/put', {
      key: Buffer.from('/nestor-test/compaction-marker').toString('base64'),
      value: Buffer.from(String(Date.now())).toString('base64'),
    });
    const revision = Number(put.header.revision);
    await post('/v3/kv/compaction', { revision: String(revision), physical: true });
    const watchCacheOff = owned.apiServerArgs.includes('--watch-cache=false');
    if ((options.restartApiServer ?? true) && !watchCacheOff) await this.restartApiServer();
    return revision;
  }

  /**
   * Fault handle: writes `value` under `key` straight into etcd, past the API server's
   * validation, as a restored backup or anyone with etcd access could: the API server
   * serves what etcd holds. Stored objects are "k8s\0"-enveloped protobuf under
   * /registry/<resource>/<namespace>/<name>.
   */
  async putInEtcd(key: string, value: Buffer): Promise<void> {
    const owned = this.requireOwned('putInEtcd');
    const response = await fetch(`${owned.etcdUrl}/v3/kv/put`, {
      method: 'POST',
      body: JSON.stringify({ key: Buffer.from(key).toString('base64'), value: value.toString('base64') }),
    });
    if (!response.ok) throw new Error(`etcd put ${key}: HTTP ${response.status}: ${await response.text()}`);
  }

  /** Stops the control plane (in reverse order) and removes its files; with an existing cluster, deletes the namespaces it created. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const webhooks of this.webhooks.splice(0)) await webhooks.uninstall();
    const owned = this.owned;
    if (!owned) {
      for (const name of this.namespaces) {
        await this.client.request('DELETE', `/api/v1/namespaces/${name}`).catch((error: unknown) => {
          if (!(error instanceof KubeApiError && error.status === 404)) throw error;
        });
      }
      this.client.close();
      return;
    }
    this.client.close();
    await owned.kwok?.stop();
    await owned.scheduler?.stop();
    await owned.controllerManager?.stop();
    await owned.apiServer.stop();
    await owned.etcdRelay?.close();
    await owned.etcd.stop();
    await rm(owned.dir, { recursive: true, force: true });
  }

  private requireOwned(what: string): OwnedControlPlane {
    if (!this.owned) {
      throw new Error(
        `${what} needs a control plane this environment started itself; it is attached to an existing cluster (USE_EXISTING_CLUSTER). Pass { useExistingCluster: false }.`,
      );
    }
    return this.owned;
  }
}

function kubeconfigFile(server: string, ca: string, identity: AdminIdentity): string {
  const base64 = (text: string) => Buffer.from(text).toString('base64');
  const user = identity.token
    ? { token: identity.token }
    : {
        'client-certificate-data': base64(identity.clientCertificate!),
        'client-key-data': base64(identity.clientKey!),
      };
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'nestor-test', cluster: { server, 'certificate-authority-data': base64(ca) } }],
    users: [{ name: 'admin', user }],
    contexts: [{ name: 'nestor-test', context: { cluster: 'nestor-test', user: 'admin' } }],
    'current-context': 'nestor-test',
  });
}

/** Polls `ready` until it holds, failing at once with the output of a process that exited. */
async function waitFor(proc: ControlPlaneProcess, timeoutMs: number, ready: () => Promise<boolean>): Promise<void> {
  await waitUntil([proc], timeoutMs, ready, `${proc.name} did not become ready`);
}

async function waitReady(client: ApiClient, timeoutMs: number, watched: ControlPlaneProcess[]): Promise<void> {
  let last = '';
  await waitUntil(
    watched,
    timeoutMs,
    async () => {
      try {
        const { status, text } = await client.raw('GET', '/readyz', undefined, undefined, 2000);
        last = `HTTP ${status}: ${text.slice(0, 300)}`;
        return status === 200;
      } catch (error) {
        last = (error as Error).message;
        return false;
      }
    },
    `the API server at ${client.server} did not become ready`,
    () => last,
  );
}

async function waitUntil(
  watched: ControlPlaneProcess[],
  timeoutMs: number,
  ready: () => Promise<boolean>,
  failure: string,
  detail: () => string = () => '',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const dead = watched.find((p) => !p.running);
    if (dead) {
      const { code, signal } = await dead.exited;
      throw new Error(`${dead.name} exited during start-up (${signal ?? `exit code ${code}`}):\n${dead.outputTail()}`);
    }
    if (await ready()) return;
    if (Date.now() > deadline) {
      const tails = watched.map((p) => `--- ${p.name} output:\n${p.outputTail()}`).join('\n');
      throw new Error(
        `${failure} within ${timeoutMs} ms${detail() ? ` (last: ${detail()})` : ''}. Raise KUBEBUILDER_CONTROLPLANE_START_TIMEOUT if the machine is slow.\n${tails}`,
      );
    }
    await sleep(100);
  }
}
