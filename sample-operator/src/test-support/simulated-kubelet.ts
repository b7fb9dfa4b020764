// A local control plane (etcd + kube-apiserver + kube-controller-manager) has no scheduler
// and no kubelet: Deployments get ReplicaSets and Pods, but the Pods stay Pending forever.
// This controller stands in for the kubelet in tests and the demo: it marks each Pod that
// no node runs Running and Ready after a start-up delay, so Deployments roll out and report
// available replicas. It does nothing on a cluster that has Nodes.
import { Inject, Optional } from '@nestjs/common';
import { Controller, KubeClient, Node, Pod, Reconcile, type ReconcileResult } from '@nestor/operator';
import type { PodObject } from '../kube-types.js';

export const SIMULATED_POD_START_MS = Symbol('SIMULATED_POD_START_MS');

@Controller(Pod, { name: 'SimulatedKubelet', maxConcurrentReconciles: 4 })
export class SimulatedKubelet {
  private readonly firstSeen = new Map<string, number>();
  private hasNodes?: Promise<boolean>;

  constructor(
    private readonly kube: KubeClient,
    @Optional() @Inject(SIMULATED_POD_START_MS) private readonly startMs: number = 1000,
  ) {}

  @Reconcile()
  async reconcile(pod: PodObject): Promise<ReconcileResult | void> {
    const ready = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    if (ready || pod.spec?.nodeName || pod.metadata?.deletionTimestamp) return;
    this.hasNodes ??= this.kube.list(Node).then((nodes) => nodes.length > 0);
    if (await this.hasNodes) return;

    const uid = pod.metadata!.uid!;
    const seen = this.firstSeen.get(uid) ?? Date.now();
    this.firstSeen.set(uid, seen);
    const wait = seen + this.startMs - Date.now();
    if (wait > 0) return { requeueAfter: wait };

    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const condition = (type: string) => ({ type, status: 'True', lastTransitionTime: now });
    await this.kube.patchStatus(pod, {
      phase: 'Running',
      startTime: now,
      podIP: '10.0.0.1',
      conditions: ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'].map(condition),
      containerStatuses: (pod.spec?.containers ?? []).map((c) => ({
        name: c.name,
        image: c.image,
        imageID: '',
        ready: true,
        started: true,
        restartCount: 0,
        state: { running: { startedAt: now } },
      })),
    });
    this.firstSeen.delete(uid);
  }
}
