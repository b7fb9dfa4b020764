import type { KubeObject } from '@nestor/core';

/** An event of a watched kind as informers publish it and controllers filter it. `old` is set for updates. */
export interface ResourceEvent<T = KubeObject> {
  type: 'added' | 'updated' | 'deleted';
  object: T;
  old?: T;
}
