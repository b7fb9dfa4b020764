// Admission for Memcached: a default size and a size cap, both from the namespace's quota
// ConfigMap (through the injected MemcachedQuotas). The CRD's schema cannot say either: they
// depend on another object.
import {
  AdmissionDenied,
  Default,
  ValidateCreate,
  ValidateUpdate,
  Webhook,
  type AdmissionContext,
} from '@nestor/operator';
import { MemcachedQuotas } from './memcached-quota.js';
import { Memcached } from './memcached.resource.js';

@Webhook(Memcached, { failurePolicy: 'Fail', timeoutSeconds: 5 })
export class MemcachedWebhook {
  constructor(private readonly quotas: MemcachedQuotas) {}

  /** spec.size from the quota's defaultSize (1 without one) when the object leaves it out. */
  @Default()
  async defaults(memcached: Memcached, ctx: AdmissionContext<Memcached>): Promise<void> {
    memcached.spec ??= {} as Memcached['spec'];
    memcached.spec.size ??= (await this.quotas.of(ctx.namespace!)).defaultSize;
  }

  @ValidateCreate()
  create(memcached: Memcached, ctx: AdmissionContext<Memcached>): Promise<void> {
    return this.checkSize(memcached, ctx);
  }

  @ValidateUpdate()
  async update(memcached: Memcached, old: Memcached, ctx: AdmissionContext<Memcached>): Promise<void> {
    // Shrinking is always allowed: a namespace over a lowered quota must be able to comply.
    if (memcached.spec.size > old.spec.size) await this.checkSize(memcached, ctx);
  }

  private async checkSize(memcached: Memcached, ctx: AdmissionContext<Memcached>): Promise<void> {
    const { maxSize } = await this.quotas.of(ctx.namespace!);
    if (maxSize !== undefined && memcached.spec.size > maxSize) {
      throw new AdmissionDenied(
        `spec.size ${memcached.spec.size} exceeds the namespace's Memcached quota of ${maxSize} (ConfigMap memcached-quota)`,
        { code: 422, reason: 'Invalid' },
      );
    }
  }
}
