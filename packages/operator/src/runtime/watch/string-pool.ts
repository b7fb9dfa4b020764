import type { KubeObject } from '@nestor/core';

/** Strings longer than this are not pooled: label values, namespaces, kinds and times are shorter (63 at most). */
const MAX_POOLED_LENGTH = 63;
/** Distinct strings held before the pool starts over: a bound on its memory whatever the objects say. */
const MAX_POOLED = 4096;

/**
 * One copy of the short strings that repeat across the objects of a watch (their namespace,
 * creation time, label values, owners' apiVersion and kind), so that each cached object points at it
 * instead of holding its own: a decoder makes a new string for each. Bounded: past
 * MAX_POOLED distinct strings it starts over (objects keep what they hold, all correct).
 */
export class StringPool {
  private readonly strings = new Map<string, string>();

  /** The pooled copy of `value`, or `value` itself when it is not to be pooled. */
  intern(value: string): string {
    if (value.length > MAX_POOLED_LENGTH) return value;
    const pooled = this.strings.get(value);
    if (pooled !== undefined) return pooled;
    if (this.strings.size >= MAX_POOLED) this.strings.clear();
    this.strings.set(value, value);
    return value;
  }

  /** Points a freshly decoded object's repeated metadata strings at the pooled copies, in place. */
  internMetadata(object: KubeObject): void {
    const metadata = object.metadata;
    if (metadata === undefined || metadata === null) return;
    if (typeof metadata.namespace === 'string') metadata.namespace = this.intern(metadata.namespace);
    // Objects made together share their second: a list of 100,000 has a few hundred distinct.
    if (typeof metadata.creationTimestamp === 'string') {
      metadata.creationTimestamp = this.intern(metadata.creationTimestamp);
    }
    const labels = metadata.labels;
    if (labels !== undefined && labels !== null && typeof labels === 'object') {
      for (const key in labels) {
        // (A key "__proto__" would be assigned as the prototype; label keys cannot be it anyway.)
        if (!Object.hasOwn(labels, key) || key === '__proto__') continue;
        const value = labels[key];
        if (typeof value === 'string') labels[key] = this.intern(value);
      }
    }
    const owners = metadata.ownerReferences;
    if (Array.isArray(owners)) {
      for (const owner of owners) {
        if (owner === null || typeof owner !== 'object') continue;
        if (typeof owner.apiVersion === 'string') owner.apiVersion = this.intern(owner.apiVersion);
        if (typeof owner.kind === 'string') owner.kind = this.intern(owner.kind);
      }
    }
  }
}
