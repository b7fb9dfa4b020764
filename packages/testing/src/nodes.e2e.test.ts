import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TestEnvironment } from './environment.js';
import type { FakePodObject } from './fake-nodes.js';
import { waitFor } from './wait-for.js';

// Fake nodes (kwok) with kube-scheduler and the real controllers: workloads run as on a
// cluster, and the faults of env.nodes move them as a node's failure would. A control plane
// of its own: the faults here take nodes down.

interface Workload {
  metadata: { name: string; uid: string; generation?: number };
  status?: {
    readyReplicas?: number;
    availableReplicas?: number;
    updatedReplicas?: number;
    observedGeneration?: number;
    succeeded?: number;
    conditions?: Array<{ type: string; status: string }>;
  };
}

let env: TestEnvironment;
let startMs: number;
before(async () => {
  const started = Date.now();
  env = await TestEnvironment.start({ useExistingCluster: false, nodes: 3 });
  startMs = Date.now() - started;
});
after(() => env?.stop());

const apps = (ns: string, kind: string, name = '') => `/apis/apps/v1/namespaces/${ns}/${kind}/${name}`;
const podsOf = async (ns: string, app: string) =>
  (
    await env.client.request<{ items: FakePodObject[] }>(
      'GET',
      `/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(`app=${app}`)}`,
    )
  ).items;
const isReady = (pod: FakePodObject) =>
  pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

async function deploy(ns: string, name: string, replicas: number): Promise<void> {
  await env.client.request('POST', apps(ns, 'deployments'), {
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'web', image: 'registry.invalid/web:1' }] },
      },
    },
  });
}

/** The Deployment once all its replicas are available, with its ready pods. */
async function available(ns: string, name: string, replicas: number, what: string): Promise<FakePodObject[]> {
  return waitFor(
    async () => {
      const d = await env.client.request<Workload>('GET', apps(ns, 'deployments', name));
      const pods = (await podsOf(ns, name)).filter((p) => !p.metadata.deletionTimestamp);
      return (
        d.status?.observedGeneration === d.metadata.generation &&
        d.status?.availableReplicas === replicas &&
        pods.length === replicas &&
        pods.every(isReady) &&
        pods
      );
    },
    { timeoutMs: 60_000, intervalMs: 200, what },
  );
}

describe('fake nodes', () => {
  it('start Ready and schedulable, kwok-managed, with kube-scheduler and kwok running', async (t) => {
    t.diagnostic(`TestEnvironment.start({ nodes: 3 }) took ${startMs} ms`);
    assert.deepEqual(await env.nodes.names(), ['kwok-node-0', 'kwok-node-1', 'kwok-node-2']);
    assert.equal(env.pids.length, 5, 'etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok');
    // kwok renews each node's Lease, as a kubelet does: the node lifecycle controller reads it.
    const lease = await env.client.request<{ spec: { leaseDurationSeconds?: number; renewTime?: string } }>(
      'GET',
      '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/kwok-node-0',
    );
    assert.equal(lease.spec.leaseDurationSeconds, 8);
    assert.ok(lease.spec.renewTime, 'renewed');
  });

  it('run a Deployment: the scheduler places its pods on the nodes, kwok makes them Running and Ready', async () => {
    const ns = await env.createNamespace('nodes-deploy');
    await deploy(ns, 'web', 3);
    const pods = await available(ns, 'web', 3, 'web to be available');
    const nodes = await env.nodes.names();
    for (const pod of pods) {
      assert.ok(nodes.includes(pod.spec?.nodeName ?? ''), `${pod.metadata.name} is on a fake node`);
      assert.equal(pod.status?.phase, 'Running');
      assert.equal(pod.status?.containerStatuses?.[0]?.ready, true);
    }
  });

  it('complete a Job, roll out a StatefulSet and place a DaemonSet pod on each node', async () => {
    const ns = await env.createNamespace('nodes-batch');
    await env.client.request('POST', `/apis/batch/v1/namespaces/${ns}/jobs`, {
      metadata: { name: 'once' },
      spec: {
        completions: 2,
        template: { spec: { restartPolicy: 'Never', containers: [{ name: 'run', image: 'registry.invalid/job:1' }] } },
      },
    });
    await env.client.request('POST', apps(ns, 'statefulsets'), {
      metadata: { name: 'db' },
      spec: {
        replicas: 2,
        serviceName: 'db',
        selector: { matchLabels: { app: 'db' } },
        template: {
          metadata: { labels: { app: 'db' } },
          spec: { containers: [{ name: 'db', image: 'registry.invalid/db:1' }] },
        },
      },
    });
    await env.client.request('POST', apps(ns, 'daemonsets'), {
      metadata: { name: 'agent' },
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        template: {
          metadata: { labels: { app: 'agent' } },
          spec: { containers: [{ name: 'agent', image: 'registry.invalid/agent:1' }] },
        },
      },
    });
    const job = await waitFor(
      async () => {
        const j = await env.client.request<Workload>('GET', `/apis/batch/v1/namespaces/${ns}/jobs/once`);
        return j.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True') && j;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: 'the Job to complete' },
    );
    assert.equal(job.status?.succeeded, 2);
    await waitFor(
      async () =>
        (await env.client.request<Workload>('GET', apps(ns, 'statefulsets', 'db'))).status?.readyReplicas === 2,
      { timeoutMs: 60_000, intervalMs: 200, what: 'the StatefulSet to have 2 ready replicas' },
    );
    const agents = await waitFor(
      async () => {
        const pods = (await podsOf(ns, 'agent')).filter(isReady);
        return pods.length === 3 && pods;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: 'a ready DaemonSet pod on each of the 3 nodes' },
    );
    assert.deepEqual(agents.map((pod) => pod.spec?.nodeName).sort(), await env.nodes.names());
  });
});

describe('node faults', () => {
  it('a node NotReady: its pods are evicted and rescheduled on the others, and it comes back', async () => {
    const ns = await env.createNamespace('nodes-not-ready');
    await deploy(ns, 'web', 3);
    const before = await available(ns, 'web', 3, 'web to be available');
    const lost = before[0]!.spec!.nodeName!;
    const onLost = new Set(before.filter((p) => p.spec?.nodeName === lost).map((p) => p.metadata.name));

    const recover = await env.nodes.notReady(lost, { reason: 'KubeletDown', message: 'the test stopped it' });
    try {
      const node = await env.client.request<{
        spec: { taints?: Array<{ key: string; effect: string }> };
        status: { conditions: Array<{ type: string; status: string; reason?: string }> };
      }>('GET', `/api/v1/nodes/${lost}`);
      const ready = node.status.conditions.find((c) => c.type === 'Ready');
      assert.deepEqual([ready?.status, ready?.reason], ['False', 'KubeletDown']);
      const after = await waitFor(
        async () => {
          const pods = (await podsOf(ns, 'web')).filter((p) => !p.metadata.deletionTimestamp);
          return (
            pods.length === 3 &&
            pods.every((p) => isReady(p) && p.spec?.nodeName !== lost && !onLost.has(p.metadata.name)) &&
            pods
          );
        },
        { timeoutMs: 60_000, intervalMs: 200, what: `the pods on ${lost} to be replaced on other nodes` },
      );
      assert.equal(after.length, 3);
      const tainted = await env.client.request<typeof node>('GET', `/api/v1/nodes/${lost}`);
      assert.ok(
        tainted.spec.taints?.some((t) => t.key === 'node.kubernetes.io/not-ready' && t.effect === 'NoExecute'),
        'the node lifecycle controller tainted it',
      );
    } finally {
      await recover();
    }
    assert.ok((await env.nodes.list()).some((n) => n.metadata.name === lost && !n.spec?.taints?.length));
  });

  it('a node drained: cordoned, its pods evicted and placed elsewhere; uncordoned after', async () => {
    const ns = await env.createNamespace('nodes-drain');
    await deploy(ns, 'web', 2);
    const before = await available(ns, 'web', 2, 'web to be available');
    const drained = before[0]!.spec!.nodeName!;
    const uncordon = await env.nodes.drain(drained);
    try {
      assert.deepEqual(
        (await env.nodes.podsOn(drained)).filter((p) => p.metadata.namespace === ns),
        [],
        'no pod of the test left on the drained node',
      );
      const after = await available(ns, 'web', 2, 'web to be available again');
      assert.ok(after.every((p) => p.spec?.nodeName !== drained));
      const node = (await env.nodes.list()).find((n) => n.metadata.name === drained);
      assert.equal(node?.spec?.unschedulable, true);
    } finally {
      await uncordon();
    }
    const node = (await env.nodes.list()).find((n) => n.metadata.name === drained);
    assert.equal(node?.spec?.unschedulable, undefined);
  });

  it('a pod failed: it goes Failed with the exit code, and its ReplicaSet replaces it', async () => {
    const ns = await env.createNamespace('nodes-fail');
    await deploy(ns, 'web', 1);
    const [pod] = await available(ns, 'web', 1, 'web to be available');
    const ref = { namespace: ns, name: pod!.metadata.name };
    await env.nodes.failPod(ref, { exitCode: 137, reason: 'OOMKilled', message: 'out of memory: killed' });
    const failed = await env.client.request<FakePodObject>('GET', `/api/v1/namespaces/${ns}/pods/${ref.name}`);
    assert.equal(failed.status?.phase, 'Failed');
    assert.equal(failed.status?.containerStatuses?.[0]?.state?.terminated?.exitCode, 137);
    const [replacement] = await waitFor(
      async () => {
        const pods = (await podsOf(ns, 'web')).filter((p) => p.metadata.name !== ref.name && isReady(p));
        return pods.length === 1 && pods;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: 'a replacement pod' },
    );
    assert.equal(replacement?.status?.phase, 'Running');
  });

  it('a pod crash-looping: not ready, its restarts counted, the Deployment short of a replica; ready once it ends', async () => {
    const ns = await env.createNamespace('nodes-crash');
    await deploy(ns, 'web', 2);
    const [pod] = await available(ns, 'web', 2, 'web to be available');
    const ref = { namespace: ns, name: pod!.metadata.name };
    const stop = await env.nodes.crashLoop(ref, { periodMs: 300 });
    try {
      const looping = await waitFor(
        async () => {
          const p = await env.client.request<FakePodObject>('GET', `/api/v1/namespaces/${ns}/pods/${ref.name}`);
          return (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 2 && p;
        },
        { timeoutMs: 30_000, intervalMs: 100, what: 'the restart count to rise' },
      );
      assert.equal(looping.status?.phase, 'Running', 'a crash-looping pod stays Running');
      assert.equal(isReady(looping), false);
      assert.equal(looping.status?.containerStatuses?.[0]?.state?.waiting?.reason, 'CrashLoopBackOff');
      await waitFor(
        async () =>
          (await env.client.request<Workload>('GET', apps(ns, 'deployments', 'web'))).status?.availableReplicas === 1,
        { timeoutMs: 30_000, intervalMs: 200, what: 'the Deployment to count one available replica' },
      );
    } finally {
      await stop();
    }
    const recovered = await available(ns, 'web', 2, 'web to be available again');
    const same = recovered.find((p) => p.metadata.name === ref.name);
    assert.ok(same, 'the same pod recovered, not replaced');
    assert.ok((same.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 2, 'its restarts are kept');
  });
});

describe('fake nodes of an existing cluster (the shared control plane)', () => {
  /** Starts an environment attached to this file's control plane, as a file attaches to the shared one. */
  async function attach(options: { nodes: number; startTimeoutMs?: number }): Promise<TestEnvironment> {
    const saved = process.env.KUBECONFIG;
    process.env.KUBECONFIG = env.kubeconfigPath;
    try {
      return await TestEnvironment.start({ useExistingCluster: true, ...options });
    } finally {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
    }
  }

  it('attaches with nodes when the cluster has that many, and injects faults there too', async () => {
    const attached = await attach({ nodes: 3 });
    try {
      assert.equal(attached.ownsControlPlane, false);
      assert.deepEqual(await attached.nodes.names(), await env.nodes.names());
      await attached.nodes.cordon('kwok-node-2');
      assert.equal((await env.nodes.list()).find((n) => n.metadata.name === 'kwok-node-2')?.spec?.unschedulable, true);
      await attached.nodes.uncordon('kwok-node-2');
    } finally {
      await attached.stop();
    }
  });

  it('fails, saying how to get them, when the cluster has fewer fake nodes than asked for', async () => {
    await assert.rejects(attach({ nodes: 4, startTimeoutMs: 1_000 }), (error: Error) => {
      assert.match(error.message, /3 of 3 fake nodes usable/);
      assert.match(error.message, /NESTOR_TEST_NODES=4/);
      return true;
    });
  });
});
