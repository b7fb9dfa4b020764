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
  KubeClient,
  Reconcile,
  TerminalError,
  type ReconcileContext,
  type ReconcileResult,
} from '@nestor/operator';
import { deploymentFor, type DeploymentObject } from './memcached.deployment.js';
import { Memcached, type MemcachedStatus } from './memcached.resource.js';
import { memcachedStatus } from './memcached.status.js';

/** The image of the memcached pods (MEMCACHED_IMAGE in the environment, as in the Go tutorial). */
export const MEMCACHED_IMAGE = Symbol('MEMCACHED_IMAGE');

/** How soon to look again while the Deployment rolls out (its changes also wake us up). */
export const ROLLOUT_REQUEUE_MS = 5_000;

@Controller(Memcached, { owns: [Deployment] })
export class MemcachedController {
  constructor(
    private readonly kube: KubeClient,
    @Inject(MEMCACHED_IMAGE) private readonly image: string,
  ) {}

  @Reconcile()
  async reconcile(memcached: Memcached, ctx: ReconcileContext): Promise<ReconcileResult | void> {
    const current = await this.kube.get(Deployment, ctx.request);
    this.refuseForeign(current, memcached);

    let deployment: DeploymentObject;
    try {
      deployment = await this.kube.apply(deploymentFor(memcached, this.image), { owner: memcached });
    } catch (error) {
      await this.updateStatus(memcached, memcachedStatus(memcached, current, (error as Error).message));
      throw error; // retried with backoff
    }
    await this.recordChange(memcached, current, deployment);

    const status = memcachedStatus(memcached, deployment);
    await this.updateStatus(memcached, status);
    const progressing = status.conditions?.find((c) => c.type === 'Progressing');
    if (progressing?.status !== 'True') return;
    ctx.log.debug(`the rollout is not done (${progressing.message}): looking again in ${ROLLOUT_REQUEUE_MS} ms`);
    return { requeueAfter: ROLLOUT_REQUEUE_MS };
  }

  @Finalizer()
  async finalize(memcached: Memcached, ctx: ReconcileContext): Promise<void> {
    // Here the Go tutorial cleans up what owner references cannot (nothing, for Memcached):
    // the garbage collector deletes the Deployment once the Memcached is gone.
    const { name, namespace } = memcached.metadata;
    await this.kube.recordEvent(
      memcached,
      'Warning',
      'Deleting',
      `Custom Resource ${name} is being deleted from the namespace ${namespace}`,
    );
    ctx.log.log('finalized');
  }

  /** A Deployment of that name controlled by something else is not ours to take: retrying cannot help. */
  private refuseForeign(current: DeploymentObject | undefined, memcached: Memcached): void {
    const controller = current?.metadata?.ownerReferences?.find((o) => o.controller);
    if (controller && controller.uid !== memcached.metadata.uid) {
      throw new TerminalError(
        `Deployment ${current!.metadata!.name} is controlled by ${controller.kind} ${controller.name}: rename the Memcached or delete that Deployment`,
      );
    }
  }

  /** An Event for each change to the Deployment, as `kubectl describe memcached` shows them. */
  private async recordChange(memcached: Memcached, before: DeploymentObject | undefined, after: DeploymentObject) {
    const name = after.metadata?.name;
    if (!before) {
      const message = `Created Deployment ${name} with ${memcached.spec.size} replicas`;
      return this.kube.recordEvent(memcached, 'Normal', 'Created', message);
    }
    const changes = (['replicas', 'containerPort', 'image'] as const)
      .filter((field) => shown(before, field) !== shown(after, field))
      .map((field) => `${field} ${shown(before, field)} -> ${shown(after, field)}`);
    if (changes.length === 0) return;
    const reason = changes.length === 1 && changes[0]!.startsWith('replicas') ? 'Scaled' : 'Updated';
    await this.kube.recordEvent(memcached, 'Normal', reason, `${reason} Deployment ${name}: ${changes.join(', ')}`);
  }

  /** Writes the status only when it changed: every write is an event that reconciles again. */
  private async updateStatus(memcached: Memcached, status: MemcachedStatus): Promise<void> {
    if (!isDeepStrictEqual(memcached.status, status)) await this.kube.patchStatus(memcached, status);
  }
}

/** The fields of a Deployment that a Memcached sets. */
function shown(deployment: DeploymentObject, field: 'replicas' | 'containerPort' | 'image'): unknown {
  const container = deployment.spec?.template.spec?.containers[0];
  if (field === 'replicas') return deployment.spec?.replicas;
  return field === 'image' ? container?.image : container?.ports?.[0]?.containerPort;
}
