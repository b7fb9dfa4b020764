import type { KubeObject } from '@nestor/core';
import type { ResourceEvent } from '../cache/resource-event.js';

export type { ResourceEvent };

/** Decides whether an event should enqueue a reconcile (controller-runtime's predicate). */
export type Predicate<T = KubeObject> = (event: ResourceEvent<T>) => boolean;

const meta = (object: unknown) => (object as KubeObject).metadata ?? {};

/** Updates pass only when metadata.generation changed (spec edits, not status writes). */
export const generationChanged: Predicate = (event) =>
  event.type !== 'updated' || !event.old || meta(event.old).generation !== meta(event.object).generation;

/** Updates pass only when the labels changed. */
export const labelsChanged: Predicate = (event) =>
  event.type !== 'updated' || !event.old || !shallowEqual(meta(event.old).labels, meta(event.object).labels);

/** Updates pass only when the annotations changed. */
export const annotationsChanged: Predicate = (event) =>
  event.type !== 'updated' || !event.old || !shallowEqual(meta(event.old).annotations, meta(event.object).annotations);

/** Updates pass only when the object changed at all (filters periodic resyncs). */
export const resourceVersionChanged: Predicate = (event) =>
  event.type !== 'updated' || !event.old || meta(event.old).resourceVersion !== meta(event.object).resourceVersion;

/** Passes when any of the predicates passes. */
export function anyOf<T>(...predicates: Predicate<T>[]): Predicate<T> {
  return (event) => predicates.some((p) => p(event));
}

/** Passes when every predicate passes. */
export function allOf<T>(...predicates: Predicate<T>[]): Predicate<T> {
  return (event) => predicates.every((p) => p(event));
}

function shallowEqual(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  if (a === b) return true;
  const ak = Object.keys(a ?? {});
  if (ak.length !== Object.keys(b ?? {}).length) return false;
  return ak.every((k) => a?.[k] === b?.[k]);
}
