import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { installCustomResourceDefinitions, sleep } from '@nestor/core';
import { createAdminIdentity, type AdminIdentity } from './admin-identity.js';
import { kubeconfigFile } from './admin-kubeconfig.js';
import { ApiClient } from './api-client.js';
import { auditLogFlags } from './audit-log.js';
import { ensureControlPlaneBinaries, type ControlPlaneBinaries } from './controlplane-binaries.js';
import { waitForProcess, waitReady, waitUntil } from './control-plane-readiness.js';
import { loadCustomResourceDefinitions } from './crds.js';
import type { EnvironmentBounds, TestEnvironmentOptions } from './environment-options.js';
import { flag } from './environment-options.js';
import { FakeNodes, isUsable } from './fake-nodes.js';
import {
  NODE_API_SERVER_FLAGS,
  NODE_CONTROLLER_MANAGER_FLAGS,
  NODE_CONTROLLERS,
  startNodeComponents,
} from './node-components.js';
import { assertPortFree, freePort, onFreePorts } from './ports.js';
import { ControlPlaneProcess, type ProcessOptions } from './process.js';
import { createServiceAccountKey } from './service-account-key.js';
import { TcpRelay } from './tcp-relay.js';

// The control plane a TestEnvironment starts itself (not USE_EXISTING_CLUSTER): its
// processes in order, the API server's restart, and the stop in reverse order.

const DEFAULT_CONTROLLERS = [
  'garbage-collector-controller',
  'namespace-controller',
  'deployment-controller',
  'replicaset-controller',
  'serviceaccount-controller',
];

/** What an environment started: its processes, files and the arguments to start them again. */
export interface OwnedControlPlane {
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

/** A started control plane and its admin's kubeconfig and client. */
export interface LaunchedControlPlane {
  kubeConfig: KubeConfig;
  kubeconfigPath: string;
  client: ApiClient;
  owned: OwnedControlPlane;
}

/**
 * Starts etcd, kube-apiserver and what the options ask for (kube-controller-manager, fake
 * nodes with kube-scheduler and kwok), each once the one before is ready, the CRDs installed
 * before kube-controller-manager; on a failure stops what started and removes its files.
 */
export async function launchControlPlane(
  options: TestEnvironmentOptions,
  settings: EnvironmentBounds,
  /** Picks each port the options leave unset (a test gives one that hands out a taken port). */
  pick: () => Promise<number> = freePort,
): Promise<LaunchedControlPlane> {
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
  // Read first: a CRD file that is missing or not YAML fails before any process starts.
  const crds = options.crds?.length ? await loadCustomResourceDefinitions(options.crds) : [];
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
    // A port picked free may be taken before etcd binds it: then it starts again on new ones.
    const { etcd, etcdUrl } = await onFreePorts(async (pick) => {
      const etcdPort = options.etcdPort ?? (await pick());
      const peerPort = await pick();
      const etcdUrl = `http://127.0.0.1:${etcdPort}`;
      const etcdDir = join(dir, 'etcd');
      await rm(etcdDir, { recursive: true, force: true }); // a failed attempt's
      const etcd = new ControlPlaneProcess(
        'etcd',
        binaries.etcd,
        [
          `--data-dir=${etcdDir}`,
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
      await waitForProcess(etcd, settings.startTimeoutMs, async () => {
        // Bounded: what took the port may accept and never answer.
        const response = await fetch(`${etcdUrl}/health`, { signal: AbortSignal.timeout(2_000) }).catch(
          () => undefined,
        );
        return response?.ok === true;
      });
      return { etcd, etcdUrl };
    }, pick);

    etcdRelay = options.etcdRelay ? await TcpRelay.start(etcdUrl) : undefined;
    const audit = options.auditLog ? await auditLogFlags(dir) : undefined;
    const certDir = join(dir, 'certs');
    const caFile = join(certDir, 'apiserver.crt'); // its serving certificate and CA, written on start
    const kubeconfigPath = join(dir, 'kubeconfig');
    // The same for the API server's port (its serving certificate is for 127.0.0.1, any port).
    const { apiServer, apiServerArgs, kubeConfig, client } = await onFreePorts(async (pick) => {
      const port = options.apiServerPort ?? (await pick());
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
      // It writes the file in place (the serving certificate, then its CA): read it whole,
      // not while it is being written, or the kubeconfig trusts half of it.
      let ca = '';
      await waitForProcess(apiServer, settings.startTimeoutMs, async () => {
        const read = await readFile(caFile, 'utf8').catch(() => '');
        const whole = read !== '' && (read.split('-----END CERTIFICATE-----').length > 2 || read === ca);
        ca = read;
        return whole;
      });

      const kubeconfigYaml = kubeconfigFile(`https://127.0.0.1:${port}`, ca, identity);
      await writeFile(kubeconfigPath, kubeconfigYaml, { mode: 0o600 });
      const kubeConfig = new KubeConfig();
      kubeConfig.loadFromString(kubeconfigYaml);
      const client = await ApiClient.fromKubeConfig(kubeConfig);
      try {
        await waitReady(client, settings.startTimeoutMs, [apiServer]);
      } catch (error) {
        client.close();
        throw error;
      }
      return { apiServer, apiServerArgs, kubeConfig, client };
    }, pick);
    // Before kube-controller-manager: its garbage collector reads the kinds there are when it
    // starts, and learns of one installed later only at its next discovery sync (every 30 s,
    // a constant of kube-controller-manager), so an object such a kind owns, or that owns one,
    // would outlive its owner's deletion that long.
    if (crds.length > 0) {
      await installCustomResourceDefinitions(client.transport, crds, {
        fieldManager: 'nestor-testing',
        timeoutMs: settings.startTimeoutMs,
      });
    }

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

    const owned: OwnedControlPlane = {
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
    };
    return { kubeConfig, kubeconfigPath, client, owned };
  } catch (error) {
    for (const proc of started.reverse()) await proc.stop();
    await etcdRelay?.close();
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Stops kube-apiserver (SIGTERM, or SIGKILL with `kill`) and starts it again on the same
 * port with the same etcd; resolves once it is ready.
 */
export async function restartApiServer(
  owned: OwnedControlPlane,
  client: ApiClient,
  startTimeoutMs: number,
  options: { kill?: boolean; downtimeMs?: number },
): Promise<void> {
  await stopApiServer(owned, options);
  if (options.downtimeMs) await sleep(options.downtimeMs);
  await startApiServer(owned, client, startTimeoutMs);
}

/** Stops kube-apiserver (SIGTERM, or SIGKILL with `kill`); etcd runs on. */
export async function stopApiServer(owned: OwnedControlPlane, options: { kill?: boolean }): Promise<void> {
  if (!owned.apiServer.running) throw new Error('stopApiServer: kube-apiserver is already stopped');
  if (options.kill) await owned.apiServer.kill();
  else await owned.apiServer.stop();
}

/** Starts kube-apiserver again after stopApiServer, on its port with its etcd; resolves once it is ready. */
export async function startApiServer(
  owned: OwnedControlPlane,
  client: ApiClient,
  startTimeoutMs: number,
): Promise<void> {
  if (owned.apiServer.running) throw new Error('startApiServer: kube-apiserver is running; stopApiServer() first');
  owned.apiServer = new ControlPlaneProcess(
    'kube-apiserver',
    owned.binaries.kubeApiServer,
    owned.apiServerArgs,
    owned.processOptions,
  );
  await waitReady(client, startTimeoutMs, [owned.apiServer]);
}

/** Stops the processes in reverse order of their start, and removes the files. */
export async function stopControlPlane(owned: OwnedControlPlane): Promise<void> {
  await owned.kwok?.stop();
  await owned.scheduler?.stop();
  await owned.controllerManager?.stop();
  await owned.apiServer.stop();
  await owned.etcdRelay?.close();
  await owned.etcd.stop();
  await rm(owned.dir, { recursive: true, force: true });
}
