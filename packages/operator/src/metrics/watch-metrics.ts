import type { Registry } from 'prom-client';
import { prom } from './prom-client.js';

/** Live numbers the metrics read when scraped. */
export interface WatchStatsSource {
  resource: string;
  stats: { restarts: number; relists: number; lastEventAt?: number; lastSyncAt?: number };
  /** What its informer keeps of each object: objects, metadata, or a skeleton (events only). */
  mode?: 'objects' | 'metadata' | 'events';
  /** Objects (or skeletons) it holds. */
  objects?: number;
  /** The member cluster it watches (a fleet's): counted in nestor_cache_objects only, by cluster. */
  cluster?: string;
}

/** Nestor's watch health, read from the watches' stats when scraped. */
export class WatchMetrics {
  private readonly watches = new Set<() => WatchStatsSource[]>();

  constructor(registry: Registry) {
    const registers = [registry];
    const watches = this.watches;
    const watchGauge = (name: string, help: string, read: (s: WatchStatsSource) => number | undefined) =>
      new prom.Gauge({
        name,
        help,
        labelNames: ['resource'],
        registers,
        collect() {
          this.reset();
          for (const source of [...watches].flatMap((list) => list())) {
            if (source.cluster !== undefined) continue;
            const value = read(source);
            if (value !== undefined) this.set({ resource: source.resource }, value);
          }
        },
      });
    new prom.Gauge({
      name: 'nestor_cache_objects',
      help:
        'Objects the informers of a resource hold, by what they keep of each: objects (reads are served ' +
        'from them), metadata, or events (a skeleton per object: the kind is watched for events only); ' +
        "a fleet's member clusters by cluster",
      labelNames: ['resource', 'mode', 'cluster'],
      registers,
      collect() {
        this.reset();
        const totals = new Map<string, { labels: Record<string, string>; objects: number }>();
        for (const source of [...watches].flatMap((list) => list())) {
          const { resource, mode, cluster } = source;
          if (mode === undefined) continue;
          const key = `${resource}\n${mode}\n${cluster ?? ''}`;
          const total = totals.get(key) ?? { labels: { resource, mode, ...(cluster ? { cluster } : {}) }, objects: 0 };
          total.objects += source.objects ?? 0;
          totals.set(key, total);
        }
        for (const { labels, objects } of totals.values()) this.set(labels, objects);
      },
    });
    watchGauge('nestor_watch_restarts', 'Times the watch of a resource reconnected', (s) => s.stats.restarts);
    watchGauge(
      'nestor_watch_relists',
      'Times the watch of a resource listed anew (first list, 410 Gone)',
      (s) => s.stats.relists,
    );
    watchGauge(
      'nestor_watch_last_event_age_seconds',
      'Seconds since the watch of a resource last received anything (its list, an event or a bookmark)',
      (s) => {
        // From the list on: a watch that never got an event since must show its age, not vanish.
        const last = Math.max(s.stats.lastEventAt ?? -Infinity, s.stats.lastSyncAt ?? -Infinity);
        return last === -Infinity ? undefined : (Date.now() - last) / 1000;
      },
    );
  }

  /** Reads watch health when scraped. */
  track(source: () => WatchStatsSource[]): void {
    this.watches.add(source);
  }
}
