import type { KubeObject } from '@nestor/core';

/** An event of a watched kind as informers publish it and controllers filter it. `old` is set for updates. */
export interface ResourceEvent<T = KubeObject> {
  type: 'added' | 'updated' | 'deleted';
  object: T;
  old?: T;
  /** The member cluster it happened in, for a watch of member clusters (unset for the manager's own). */
  cluster?: string;
}
