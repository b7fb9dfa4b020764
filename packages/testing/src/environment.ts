import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { installCustomResourceDefinitions, KubeApiError } from '@nestor/core';
import { ApiClient } from './api-client.js';
import { readAuditLog, type AuditEvent } from './audit-log.js';
import { waitReady } from './control-plane-readiness.js';
import { loadCustomResourceDefinitions, type CrdSource } from './crds.js';
import { environmentBounds, flag, type EnvironmentBounds, type TestEnvironmentOptions } from './environment-options.js';
import { compactEtcdHistory, putInEtcd, readFromEtcd, type EtcdEntry } from './etcd-faults.js';
import { FakeNodes } from './fake-nodes.js';
import { throttleByFlowControl, type ThrottledSubject } from './flow-control-throttle.js';
import {
  launchControlPlane,
  restartApiServer,
  startApiServer,
  stopApiServer,
  stopControlPlane,
  type OwnedControlPlane,
} from './owned-control-plane.js';
import type { TcpRelay } from './tcp-relay.js';
import { LocalWebhooks, type WebhookInstallOptions } from './webhooks.js';

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
    private readonly options: EnvironmentBounds,
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
    const settings = environmentBounds(options, env);
    const useExisting = options.useExistingCluster ?? flag(env.USE_EXISTING_CLUSTER);
    const environment = useExisting
      ? await TestEnvironment.attach(settings)
      : await TestEnvironment.launch(options, settings);
    try {
      if (options.nodes) {
        environment.fakeNodes = new FakeNodes(environment.client, settings.startTimeoutMs);
        if (useExisting) await environment.waitForSharedNodes(options.nodes);
      }
      // A control plane started here has them already, installed before its controller-manager.
      if (options.crds?.length && useExisting) await environment.installCRDs(options.crds);
    } catch (error) {
      await environment.stop();
      throw error;
    }
    return environment;
  }

  private static async attach(settings: EnvironmentBounds): Promise<TestEnvironment> {
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

  private static async launch(options: TestEnvironmentOptions, settings: EnvironmentBounds): Promise<TestEnvironment> {
    const { kubeConfig, kubeconfigPath, client, owned } = await launchControlPlane(options, settings);
    return new TestEnvironment(kubeConfig, kubeconfigPath, client, settings, owned);
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
    await restartApiServer(this.requireOwned('restartApiServer'), this.client, this.options.startTimeoutMs, options);
  }

  /**
   * Fault handle, restartApiServer in two steps, for an outage whose end the caller times:
   * stops kube-apiserver (SIGTERM, or SIGKILL with `{ kill: true }`) and leaves it stopped,
   * etcd running, until startApiServer().
   */
  async stopApiServer(options: { kill?: boolean } = {}): Promise<void> {
    await stopApiServer(this.requireOwned('stopApiServer'), options);
  }

  /** Starts kube-apiserver again after stopApiServer(); resolves once it answers /readyz with 200. */
  async startApiServer(): Promise<void> {
    await startApiServer(this.requireOwned('startApiServer'), this.client, this.options.startTimeoutMs);
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
    subject: ThrottledSubject,
    resources: Array<{ apiGroup: string; resource: string }> = [{ apiGroup: '*', resource: '*' }],
  ): Promise<() => Promise<void>> {
    return throttleByFlowControl(this.client, subject, resources, this.options.startTimeoutMs);
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
    const revision = await compactEtcdHistory(owned.etcdUrl);
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
    await putInEtcd(owned.etcdUrl, key, value);
  }

  /**
   * Reads what etcd holds under `prefix`, past the API server: each object as stored, in the
   * version it was stored in (a custom resource is JSON naming its apiVersion; a built-in
   * kind "k8s\0"-enveloped protobuf). Keys are /registry/<group>/<plural>/<namespace>/<name>
   * for custom resources, /registry/<resource>/<namespace>/<name> for built-in kinds.
   * `{ exact: true }` reads the one key `prefix`.
   */
  async readFromEtcd(prefix: string, options: { exact?: boolean } = {}): Promise<EtcdEntry[]> {
    const owned = this.requireOwned('readFromEtcd');
    return readFromEtcd(owned.etcdUrl, prefix, options);
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
    await stopControlPlane(owned);
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
