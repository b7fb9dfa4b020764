import type { Counter, Registry } from 'prom-client';
import { prom } from './prom-client.js';
import type { EventRecorderMetrics } from '../runtime/manager/manager.js';

/** The Event recorder's writes and drops, every verb and reason from the start at 0. */
export class EventMetrics {
  private readonly eventsWritten: Counter<'verb'>;
  private readonly eventsDropped: Counter<'reason'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.eventsWritten = new prom.Counter({
      name: 'nestor_events_written_total',
      help: 'Event writes to the API server: create (a new Event) or patch (its count or series)',
      labelNames: ['verb'],
      registers,
    });
    this.eventsDropped = new prom.Counter({
      name: 'nestor_events_dropped_total',
      help: 'Events not written, by reason (queue-full, rate-limited, failed, fenced, shutdown, invalid)',
      labelNames: ['reason'],
      registers,
    });
    for (const verb of ['create', 'patch']) this.eventsWritten.inc({ verb }, 0);
    for (const reason of ['queue-full', 'rate-limited', 'failed', 'fenced', 'shutdown', 'invalid'])
      this.eventsDropped.inc({ reason }, 0);
  }

  /** The sink of the Event recorder: Events written and dropped. */
  sink(): EventRecorderMetrics {
    return {
      written: (verb) => this.eventsWritten.inc({ verb }),
      dropped: (reason) => this.eventsDropped.inc({ reason }),
    };
  }
}
