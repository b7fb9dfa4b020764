import { systemClock, type Clock } from '@nestor/core';
import type { Condition, ConditionStatus } from './condition.js';

// k8s.io/apimachinery/pkg/api/meta/conditions.go for TypeScript. One difference: these never
// mutate. A reconciler's object is the informer cache's (shared by every controller), so
// `setStatusCondition` returns a new list, or the very list it was given when nothing
// changed: `next !== conditions` is Go's `changed`.

/** What a caller sets: lastTransitionTime is the helper's business (given, it is used on a transition). */
export type ConditionUpdate = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'> & {
  lastTransitionTime?: string;
  observedGeneration?: number;
};

/** Where setStatusCondition and StatusConditions take the time from, for tests. */
export interface ConditionClockOptions {
  /** Time of transitions (default: the system clock). */
  clock?: Pick<Clock, 'now'>;
}

/**
 * meta.SetStatusCondition: adds the condition of `update.type` or updates it in place.
 * lastTransitionTime changes only when the status changes (to `update.lastTransitionTime`
 * when given, else now); reason, message and observedGeneration are updated. Returns the
 * same array when nothing changed, else a new one (the input is never modified).
 */
export function setStatusCondition(
  conditions: readonly Condition[] | undefined,
  update: ConditionUpdate,
  options: ConditionClockOptions = {},
): Condition[] {
  const list = conditions ?? [];
  const index = list.findIndex((c) => c.type === update.type);
  const now = () => update.lastTransitionTime ?? metaTime((options.clock ?? systemClock).now());
  if (index < 0) return [...list, withOptional({ ...update, lastTransitionTime: now() })];
  const existing = list[index]!;
  const transitioned = existing.status !== update.status;
  const next = withOptional({
    type: existing.type,
    status: update.status,
    observedGeneration: update.observedGeneration,
    lastTransitionTime: transitioned ? now() : existing.lastTransitionTime,
    reason: update.reason,
    message: update.message,
  });
  if (
    !transitioned &&
    existing.reason === next.reason &&
    existing.message === next.message &&
    existing.observedGeneration === next.observedGeneration
  )
    return list as Condition[];
  const copy = [...list];
  copy[index] = next;
  return copy;
}

/** meta.RemoveStatusCondition: the list without the condition of `type`, or the same list when it had none. */
export function removeStatusCondition(conditions: readonly Condition[] | undefined, type: string): Condition[] {
  const list = (conditions ?? []) as Condition[];
  return list.some((c) => c.type === type) ? list.filter((c) => c.type !== type) : list;
}

/** meta.FindStatusCondition. */
export function findStatusCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** meta.IsStatusConditionTrue: present with status True. */
export function isStatusConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return isStatusConditionPresentAndEqual(conditions, type, 'True');
}

/** meta.IsStatusConditionFalse: present with status False (absent is neither True nor False). */
export function isStatusConditionFalse(conditions: readonly Condition[] | undefined, type: string): boolean {
  return isStatusConditionPresentAndEqual(conditions, type, 'False');
}

/** meta.IsStatusConditionPresentAndEqual. */
export function isStatusConditionPresentAndEqual(
  conditions: readonly Condition[] | undefined,
  type: string,
  status: ConditionStatus,
): boolean {
  return findStatusCondition(conditions, type)?.status === status;
}

/** An object whose status has conditions (any `@CustomResource` with a `conditions: Condition[]` status). */
export interface ObjectWithConditions {
  metadata?: { generation?: number };
  status?: { conditions?: Condition[] } | undefined;
}

/**
 * The conditions of one object, changed as a reconcile goes: each `set` stamps the
 * object's metadata.generation as observedGeneration, so no caller forgets it. Reads the
 * object's conditions, never writes them: write `list` with patchStatus when `changed`.
 *
 * ```ts
 * const conditions = new StatusConditions(memcached);
 * conditions.set({ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: '2/2 pods' });
 * if (conditions.changed) await kube.patchStatus(memcached, { conditions: conditions.list });
 * ```
 */
export class StatusConditions {
  private readonly original: readonly Condition[];
  private current: Condition[];
  private readonly generation: number | undefined;

  constructor(
    object: ObjectWithConditions,
    private readonly options: ConditionClockOptions = {},
  ) {
    this.original = object.status?.conditions ?? [];
    this.current = this.original as Condition[];
    this.generation = object.metadata?.generation;
  }

  /** The conditions now: the object's own array until something changed. */
  get list(): Condition[] {
    return this.current;
  }

  /** Whether any set or remove changed the object's conditions. */
  get changed(): boolean {
    return this.current !== this.original;
  }

  /** Sets a condition with observedGeneration from the object; true when it changed it. */
  set(update: Omit<ConditionUpdate, 'observedGeneration'>): boolean {
    const before = this.current;
    this.current = setStatusCondition(
      before,
      this.generation === undefined ? update : { ...update, observedGeneration: this.generation },
      this.options,
    );
    return this.current !== before;
  }

  /** Removes the condition of `type`; true when there was one. */
  remove(type: string): boolean {
    const before = this.current;
    this.current = removeStatusCondition(before, type);
    return this.current !== before;
  }

  find(type: string): Condition | undefined {
    return findStatusCondition(this.current, type);
  }

  isTrue(type: string): boolean {
    return isStatusConditionTrue(this.current, type);
  }

  isFalse(type: string): boolean {
    return isStatusConditionFalse(this.current, type);
  }
}

/** metav1.Time: RFC 3339 to the second, as the API server stores it. */
export function metaTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** observedGeneration only when set, so an unchanged condition stays deep-equal to the stored one. */
function withOptional(condition: Condition): Condition {
  if (condition.observedGeneration === undefined) delete condition.observedGeneration;
  return condition;
}
