// Reconciles of operator processes as time intervals, to check that two replicas never
// reconcile one object at once (production-replicas.e2e and the chaos suite).
import type { OperatorProcess } from './operator-process.js';

export interface ReconcileInterval {
  identity: string;
  key: string;
  start: number;
  end: number;
}

/** Each replica's reconciles as [start, end]; a run cut short by the process's death ends at its exit (Infinity while it runs). */
export async function reconcileIntervals(replicas: OperatorProcess[]): Promise<ReconcileInterval[]> {
  const all: ReconcileInterval[] = [];
  for (const r of replicas) {
    const exit = r.running ? Infinity : (await r.exited).at;
    const ends = new Map(r.of('end').map((e) => [`${e.key} ${e.start}`, e.end!]));
    for (const s of r.of('start')) {
      all.push({ identity: r.identity, key: s.key!, start: s.at, end: ends.get(`${s.key} ${s.at}`) ?? exit });
    }
  }
  return all;
}

/** Pairs of reconciles of one object by two replicas that overlap in time. */
export function overlappingReconciles(all: ReconcileInterval[]): Array<[ReconcileInterval, ReconcileInterval]> {
  const byKey = new Map<string, ReconcileInterval[]>();
  for (const interval of all) {
    const list = byKey.get(interval.key);
    if (list) list.push(interval);
    else byKey.set(interval.key, [interval]);
  }
  const found: Array<[ReconcileInterval, ReconcileInterval]> = [];
  for (const list of byKey.values()) {
    for (const [i, a] of list.entries()) {
      for (const b of list.slice(i + 1)) {
        if (a.identity !== b.identity && a.start < b.end && b.start < a.end) found.push([a, b]);
      }
    }
  }
  return found;
}
