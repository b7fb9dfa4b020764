// Nodes that kwok runs, and the faults a test injects into them. Every fault is what kwok's
// stages (kwok-stages.ts) or the API's own verbs do: a label on a Node or Pod that a stage
// matches, then kwok writes the status a kubelet would; a drain is a cordon and evictions,
// as `kubectl drain`. The real controllers react: the node lifecycle controller taints a
// NotReady node and evicts its pods, ReplicaSets replace them, the scheduler places them.
import { KubeApiError } from '@nestor/core';
import type { ApiClient } from './api-client.js';
import { waitFor } from './wait-for.js';

/** kwok manages the nodes that carry this annotation (`kwok.x-k8s.io/node: fake`). */
export const FAKE_NODE_ANNOTATION = 'kwok.x-k8s.io/node';
/** The label every fake node carries, to list them. */
export const FAKE_NODE_LABEL = 'type';
const FAKE_NODE_LABEL_VALUE = 'kwok';

// The labels kwok's chaos stages and Nestor's crash-loop stage match.
const NODE_NOT_READY = 'node-not-ready.stage.kwok.x-k8s.io';
const POD_FAILED = 'pod-container-running-failed.stage.kwok.x-k8s.io';
const POD_CRASH_LOOP = 'pod-crash-loop.stage.nestor.dev';

export interface FakeNodeOptions {
  /** Default: the next free `kwok-node-<n>`. */
  name?: string;
  /** Added to the defaults (`kubernetes.io/hostname`, `kubernetes.io/os`, `type: kwok`). */
  labels?: Record<string, string>;
  /** What the node offers the scheduler (default: 32 CPUs, 256Gi of memory, 110 pods). */
  capacity?: { cpu?: string; memory?: string; pods?: string };
  taints?: Array<{ key: string; value?: string; effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute' }>;
}

/** A pod, by namespace and name. */
export interface PodRef {
  namespace: string;
  name: string;
}

export interface PodFailure {
  /** The container's exit code (default 1). */
  exitCode?: number;
  /** The terminated state's reason (default `containerFailed` for failPod, `Error` for crashLoop). */
  reason?: string;
  /** failPod only: the terminated state's message (default `container failed`). */
  message?: string;
  /** failPod only: the container that fails (default: every container). */
  container?: string;
}

/** The parts of a Node and a Pod these helpers read. */
export interface FakeNodeObject {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: { unschedulable?: boolean; taints?: Array<{ key: string; effect: string }> };
  status?: { conditions?: Array<{ type: string; status: string; reason?: string }> };
}
export interface FakePodObject {
  metadata: {
    name: string;
    namespace: string;
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
    ownerReferences?: Array<{ kind: string; controller?: boolean }>;
  };
  spec?: { nodeName?: string };
  status?: {
    phase?: string;
    conditions?: Array<{ type: string; status: string }>;
    containerStatuses?: Array<{
      name: string;
      ready?: boolean;
      restartCount?: number;
      state?: { waiting?: { reason?: string }; running?: unknown; terminated?: { exitCode?: number } };
    }>;
  };
}

const isReady = (node: FakeNodeObject) =>
  node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
// The taints the node lifecycle controller (and node admission) put on a node that is not ready.
const hasConditionTaint = (node: FakeNodeObject) =>
  (node.spec?.taints ?? []).some(
    (t) => t.key === 'node.kubernetes.io/not-ready' || t.key === 'node.kubernetes.io/unreachable',
  );
/** Ready, schedulable and free of the not-ready taints: the scheduler may place pods on it. */
export const isUsable = (node: FakeNodeObject) =>
  isReady(node) && !node.spec?.unschedulable && !hasConditionTaint(node);

/**
 * The fake nodes of a TestEnvironment started with `nodes`, and the faults a test injects:
 *
 * ```ts
 * const env = await TestEnvironment.start({ nodes: 3 });
 * const [node] = await env.nodes.names();
 * const recover = await env.nodes.notReady(node);  // its pods are evicted and rescheduled
 * await recover();
 * ```
 *
 * Each call waits (bounded) until the fault shows in the object's status, and each fault that
 * lasts returns the function that lifts it.
 */
export class FakeNodes {
  constructor(
    private readonly client: ApiClient,
    /** Bound on each wait (default 60 s). */
    private readonly timeoutMs = 60_000,
  ) {}

  /** Every fake node (kwok's), by name, sorted. */
  async list(): Promise<FakeNodeObject[]> {
    const selector = encodeURIComponent(`${FAKE_NODE_LABEL}=${FAKE_NODE_LABEL_VALUE}`);
    const { items } = await this.client.request<{ items: FakeNodeObject[] }>(
      'GET',
      `/api/v1/nodes?labelSelector=${selector}`,
    );
    return items.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name, 'en', { numeric: true }));
  }

  /** The names of the fake nodes, sorted. */
  async names(): Promise<string[]> {
    return (await this.list()).map((node) => node.metadata.name);
  }

  /** Adds fake nodes and waits until the scheduler may use them. Returns their names. */
  async add(count = 1, options: Omit<FakeNodeOptions, 'name'> = {}): Promise<string[]> {
    const taken = new Set(await this.names());
    const names: string[] = [];
    for (let i = 0; names.length < count; i++) if (!taken.has(`kwok-node-${i}`)) names.push(`kwok-node-${i}`);
    await Promise.all(names.map((name) => this.create({ ...options, name })));
    await this.waitUsable(names);
    return names;
  }

  /** Creates one fake node (without waiting for it): kwok takes it over by its annotation. */
  async create(options: FakeNodeOptions & { name: string }): Promise<void> {
    const { name } = options;
    const resources = {
      cpu: options.capacity?.cpu ?? '32',
      memory: options.capacity?.memory ?? '256Gi',
      pods: options.capacity?.pods ?? '110',
    };
    await this.client.request('POST', '/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        annotations: { [FAKE_NODE_ANNOTATION]: 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
        labels: {
          'kubernetes.io/hostname': name,
          'kubernetes.io/os': 'linux',
          'kubernetes.io/arch': 'amd64',
          [FAKE_NODE_LABEL]: FAKE_NODE_LABEL_VALUE,
          ...options.labels,
        },
      },
      spec: options.taints ? { taints: options.taints } : {},
      status: { capacity: resources, allocatable: resources },
    });
  }

  /** Waits until these nodes (or this many fake nodes) are Ready, untainted and schedulable. */
  async waitUsable(nodes: string[] | number, timeoutMs = this.timeoutMs): Promise<void> {
    let last = '';
    await waitFor(
      async () => {
        const all = await this.list();
        const usable = all.filter(isUsable).map((n) => n.metadata.name);
        last = `${usable.length} of ${all.length} fake nodes usable (${usable.join(', ') || 'none'})`;
        return typeof nodes === 'number' ? usable.length >= nodes : nodes.every((n) => usable.includes(n));
      },
      { timeoutMs, intervalMs: 100, what: `fake nodes ${typeof nodes === 'number' ? nodes : nodes.join(', ')}` },
    ).catch((error: Error) => {
      throw new Error(`${error.message} (last: ${last})`, { cause: error });
    });
  }

  /** The pods bound to a node. */
  async podsOn(node: string): Promise<FakePodObject[]> {
    const selector = encodeURIComponent(`spec.nodeName=${node}`);
    const { items } = await this.client.request<{ items: FakePodObject[] }>(
      'GET',
      `/api/v1/pods?fieldSelector=${selector}`,
    );
    return items;
  }

  /**
   * The node's kubelet reports NotReady (kwok's `node-not-ready` stage), as when its container
   * runtime fails or its network partitions: the node lifecycle controller taints it, the
   * taint eviction controller evicts its pods (after their toleration, seconds in the test
   * environment), their controllers replace them on other nodes. Waits until the node is
   * NotReady; returns the function that makes it Ready again (and waits until it is usable).
   *
   * As on a cluster, when every node is NotReady the node lifecycle controller suspects its
   * own network and evicts nothing: a test of evictions needs a node that stays Ready
   * (cordoned, if the pods must have nowhere to go).
   */
  async notReady(node: string, why: { reason?: string; message?: string } = {}): Promise<() => Promise<void>> {
    await this.patchNode(node, {
      labels: { [NODE_NOT_READY]: 'true' },
      annotations: {
        [`${NODE_NOT_READY}/delay`]: '0s',
        [`${NODE_NOT_READY}/jitter-delay`]: '0s',
        ...(why.reason ? { [`${NODE_NOT_READY}/reason`]: why.reason } : {}),
        ...(why.message ? { [`${NODE_NOT_READY}/message`]: why.message } : {}),
      },
    });
    await this.waitNode(node, (n) => !isReady(n), 'to be NotReady');
    return async () => {
      await this.patchNode(node, { labels: { [NODE_NOT_READY]: null } });
      await this.waitUsable([node]);
    };
  }

  /** Marks the node unschedulable: new pods go elsewhere, the ones on it stay. */
  async cordon(node: string): Promise<void> {
    await this.client.request('PATCH', `/api/v1/nodes/${node}`, { spec: { unschedulable: true } });
  }

  /** Makes the node schedulable again. */
  async uncordon(node: string): Promise<void> {
    await this.client.request('PATCH', `/api/v1/nodes/${node}`, { spec: { unschedulable: null } });
  }

  /**
   * `kubectl drain`: cordons the node and evicts its pods through the Eviction API (so
   * PodDisruptionBudgets are honoured: an eviction they refuse is tried again until the bound),
   * leaving DaemonSet and mirror pods; waits until the evicted pods are gone. Returns the
   * uncordon.
   */
  async drain(node: string, timeoutMs = this.timeoutMs): Promise<() => Promise<void>> {
    await this.cordon(node);
    const evictable = (pod: FakePodObject) =>
      !pod.metadata.annotations?.['kubernetes.io/config.mirror'] &&
      !pod.metadata.ownerReferences?.some((ref) => ref.controller && ref.kind === 'DaemonSet');
    let refused = '';
    await waitFor(
      async () => {
        const pods = (await this.podsOn(node)).filter(evictable);
        for (const pod of pods.filter((p) => !p.metadata.deletionTimestamp)) {
          const { namespace, name } = pod.metadata;
          const { status, text } = await this.client.raw(
            'POST',
            `/api/v1/namespaces/${namespace}/pods/${name}/eviction`,
            { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { namespace, name } },
          );
          // 429: a PodDisruptionBudget refuses it for now; 404: already gone.
          if (status === 429) refused = `${namespace}/${name}: ${statusMessage(text)}`;
          else if (status >= 400 && status !== 404)
            throw new Error(`evicting ${namespace}/${name}: HTTP ${status}: ${statusMessage(text)}`);
        }
        return pods.length === 0;
      },
      { timeoutMs, intervalMs: 250, what: `node ${node} to be drained` },
    ).catch((error: Error) => {
      throw new Error(`${error.message}${refused ? ` (last refused: ${refused})` : ''}`, { cause: error });
    });
    return () => this.uncordon(node);
  }

  /**
   * The pod's containers exit with an error and it goes Failed (kwok's
   * `pod-container-running-failed` stage), as after an unrecoverable crash: its controller
   * (a ReplicaSet, a Job) sees a failed pod. Waits until the pod is Failed.
   */
  async failPod(pod: PodRef, failure: PodFailure = {}): Promise<void> {
    // kwok's template writes reason and message unquoted into YAML: quote them here.
    await this.patchPod(pod, {
      labels: { [POD_FAILED]: 'true' },
      annotations: {
        [`${POD_FAILED}/delay`]: '0s',
        [`${POD_FAILED}/jitter-delay`]: '0s',
        [`${POD_FAILED}/exit-code`]: String(failure.exitCode ?? 1),
        ...(failure.reason ? { [`${POD_FAILED}/reason`]: JSON.stringify(failure.reason) } : {}),
        ...(failure.message ? { [`${POD_FAILED}/message`]: JSON.stringify(failure.message) } : {}),
        ...(failure.container ? { [`${POD_FAILED}/container-name`]: failure.container } : {}),
      },
    });
    await this.waitPod(pod, (p) => p.status?.phase === 'Failed', 'to fail');
  }

  /**
   * The pod's containers crash again and again (Nestor's `pod-crash-loop` stage): not ready,
   * waiting in CrashLoopBackOff, the restart count rising every `periodMs` (default 1 s). The
   * pod stays Running, as a crash-looping pod does. Waits for the first crash; returns the
   * function that ends the loop (the containers run and are ready again).
   */
  async crashLoop(
    pod: PodRef,
    options: Pick<PodFailure, 'exitCode' | 'reason'> & { periodMs?: number } = {},
  ): Promise<() => Promise<void>> {
    await this.patchPod(pod, {
      labels: { [POD_CRASH_LOOP]: 'true' },
      annotations: {
        [`${POD_CRASH_LOOP}/delay`]: `${options.periodMs ?? 1000}ms`,
        [`${POD_CRASH_LOOP}/exit-code`]: String(options.exitCode ?? 1),
        ...(options.reason ? { [`${POD_CRASH_LOOP}/reason`]: options.reason } : {}),
      },
    });
    await this.waitPod(
      pod,
      (p) => p.status?.containerStatuses?.some((c) => c.state?.waiting?.reason === 'CrashLoopBackOff') === true,
      'to crash-loop',
    );
    return async () => {
      await this.patchPod(pod, { labels: { [POD_CRASH_LOOP]: null } });
      await this.waitPod(
        pod,
        (p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
        'to be ready again',
      );
    };
  }

  private patchNode(node: string, metadata: Record<string, unknown>): Promise<unknown> {
    return this.client.request('PATCH', `/api/v1/nodes/${node}`, { metadata });
  }

  private patchPod({ namespace, name }: PodRef, metadata: Record<string, unknown>): Promise<unknown> {
    return this.client.request('PATCH', `/api/v1/namespaces/${namespace}/pods/${name}`, { metadata });
  }

  private waitNode(node: string, done: (node: FakeNodeObject) => boolean, what: string): Promise<unknown> {
    return waitFor(async () => done(await this.client.request<FakeNodeObject>('GET', `/api/v1/nodes/${node}`)), {
      timeoutMs: this.timeoutMs,
      intervalMs: 100,
      what: `node ${node} ${what}`,
    });
  }

  private waitPod({ namespace, name }: PodRef, done: (pod: FakePodObject) => boolean, what: string): Promise<unknown> {
    return waitFor(
      async () => {
        try {
          return done(await this.client.request<FakePodObject>('GET', `/api/v1/namespaces/${namespace}/pods/${name}`));
        } catch (error) {
          if (error instanceof KubeApiError && error.status === 404) {
            throw new Error(`pod ${namespace}/${name} is gone`, { cause: error });
          }
          throw error;
        }
      },
      { timeoutMs: this.timeoutMs, intervalMs: 100, what: `pod ${namespace}/${name} ${what}` },
    );
  }
}

function statusMessage(text: string): string {
  try {
    return (JSON.parse(text) as { message?: string }).message ?? text.slice(0, 200);
  } catch {
    return text.slice(0, 200);
  }
}
