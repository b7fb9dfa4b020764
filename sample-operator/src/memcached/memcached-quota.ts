// The namespace's Memcached quota, read from a ConfigMap: what an admission rule needs that
// CEL cannot express (another object). An injectable service, so the webhook gets it by DI.
import { Injectable } from '@nestjs/common';
import { ConfigMap, KubeClient } from '@nestor/operator';
import type { ConfigMapObject } from '../kube-types.js';

/** The ConfigMap a namespace's admin writes: `maxSize` caps spec.size, `defaultSize` fills it in. */
export const QUOTA_CONFIGMAP = 'memcached-quota';

export interface MemcachedQuota {
  /** Undefined: no cap beyond the CRD's schema. */
  maxSize?: number;
  defaultSize: number;
}

@Injectable()
export class MemcachedQuotas {
  constructor(private readonly kube: KubeClient) {}

  /** The quota of a namespace (one GET: a ConfigMap changed a second ago counts). */
  async of(namespace: string): Promise<MemcachedQuota> {
    const configMap = (await this.kube.get(ConfigMap, { namespace, name: QUOTA_CONFIGMAP })) as
      ConfigMapObject | undefined;
    const number = (key: string) => {
      const value = configMap?.data?.[key];
      if (value === undefined) return undefined;
      const n = Number(value);
      if (!Number.isInteger(n) || n < 1)
        throw new Error(`ConfigMap ${namespace}/${QUOTA_CONFIGMAP}: ${key} is "${value}", not a positive integer`);
      return n;
    };
    const maxSize = number('maxSize');
    return { ...(maxSize !== undefined ? { maxSize } : {}), defaultSize: number('defaultSize') ?? 1 };
  }
}
