// The Memcached controller: the Operator SDK Go tutorial's MemcachedReconciler, in Nestor.
//
// Each reconcile gets the current Memcached from the cache (never the event that caused it),
// server-side applies the Deployment it wants, and reports the Deployment's progress in
// status. The framework runs it whenever the Memcached or a Deployment it owns changes,
// adds and removes the finalizer, and retries with backoff when this method throws.
import { Inject } from '@nestjs/common';
import { isDeepStrictEqual } from 'node:util';
import {
  Controller,
  Deployment,
  Finalizer,
  Reconcile,
  type KubeClient,
  TerminalError,
  type ReconcileContext,
  type ReconcileResult,
} from '@nestor/operator';
import type { DeploymentObject } from '../kube-types.js';
import { deploymentFor } from './memcached.deployment.js';
import { Memcached, type MemcachedStatus } from './memcached.resource.js';
import { memcachedStatus } from './memcached.status.js';

/** The image of the memcached pods (MEMCACHED_IMAGE in the environment, as in the Go tutorial). */
export const MEMCACHED_IMAGE = Symbol('MEMCACHED_IMAGE');

/** How soon to look again while the Deployment rolls out (its changes also wake us up). */
export const ROLLOUT_REQUEUE_MS = 5_000;

@Controller(Memcached, { owns: [Deployment] })
export class MemcachedController {
  constructor(@Inject(MEMCACHED_IMAGE) private readonly image: string) {}

  @Reconcile()
  async reconcile(memcached: Memcached, ctx: ReconcileContext): Promise<ReconcileResult | void> {
    // The run's client: its writes fenced by this controller's Lease, cut by ctx.signal.
    const kube = ctx.client;
    // A Deployment of that name that something else controls is not ours to take.
    const current = await kube.get(Deployment, ctx.request);
    const owner = current?.metadata?.ownerReferences?.find((o) => o.controller);
    if (owner && owner.uid !== memcached.metadata.uid) {
      const message = `Deployment ${ctx.request.name} is controlled by ${owner.kind} ${owner.name}: rename the Memcached or delete that Deployment`;
      await this.degraded(kube, memcached, undefined, 'DeploymentNotOwned', message);
      throw new TerminalError(message); // retrying cannot help: not retried until the Memcached changes
    }

    // Server-side apply the Deployment we want, with the Memcached as its controller owner.
    const deployment = await kube
      .apply(deploymentFor(memcached, this.image), { owner: memcached })
      .catch(async (error: Error) => {
        await this.degraded(kube, memcached, current, 'ApplyFailed', error.message);
        throw error; // retried with backoff
      });
    await this.recordChange(kube, memcached, current, deployment);

    // Report the rollout, and look again soon while it is in progress.
    const status = memcachedStatus(memcached, deployment);
    await this.updateStatus(kube, memcached, status);
    const progressing = status.conditions?.some((c) => c.type === 'Progressing' && c.status === 'True');
    if (progressing) return { requeueAfter: ROLLOUT_REQUEUE_MS };
  }

  @Finalizer()
  async finalize(memcached: Memcached, ctx: ReconcileContext): Promise<void> {
    // Here the Go tutorial cleans up what owner references cannot (nothing, for Memcached):
    // the garbage collector deletes the Deployment once the Memcached is gone.
    const { name, namespace } = memcached.metadata;
    await ctx.client.recordEvent(
      memcached,
      'Warning',
      'Deleting',
      `Custom Resource ${name} is being deleted from the namespace ${namespace}`,
    );
    ctx.log.log('finalized');
  }

  /** An Event for each change to the Deployment, as `kubectl describe memcached` shows them. */
  private async recordChange(
    kube: KubeClient,
    memcached: Memcached,
    before: DeploymentObject | undefined,
    after: DeploymentObject,
  ) {
    const name = after.metadata?.name;
    if (!before) {
      const message = `Created Deployment ${name} with ${memcached.spec.size} replicas`;
      return kube.recordEvent(memcached, 'Normal', 'Created', message);
    }
    const changes = (['replicas', 'containerPort', 'image'] as const)
      .filter((field) => shown(before, field) !== shown(after, field))
      .map((field) => `${field} ${shown(before, field)} -> ${shown(after, field)}`);
    if (changes.length === 0) return;
    const reason = changes.length === 1 && changes[0]!.startsWith('replicas') ? 'Scaled' : 'Updated';
    await kube.recordEvent(memcached, 'Normal', reason, `${reason} Deployment ${name}: ${changes.join(', ')}`);
  }

  private degraded(
    kube: KubeClient,
    memcached: Memcached,
    deployment: DeploymentObject | undefined,
    reason: string,
    message: string,
  ) {
    return this.updateStatus(kube, memcached, memcachedStatus(memcached, deployment, { reason, message }));
  }

  /** Writes the status only when it changed: every write is an event that reconciles again. */
  private async updateStatus(kube: KubeClient, memcached: Memcached, status: MemcachedStatus): Promise<void> {
    if (!isDeepStrictEqual(memcached.status, status)) await kube.patchStatus(memcached, status);
  }
}

/** The fields of a Deployment that a Memcached sets. */
function shown(deployment: DeploymentObject, field: 'replicas' | 'containerPort' | 'image'): unknown {
  const container = deployment.spec?.template.spec?.containers[0];
  if (field === 'replicas') return deployment.spec?.replicas;
  return field === 'image' ? container?.image : container?.ports?.[0]?.containerPort;
}
