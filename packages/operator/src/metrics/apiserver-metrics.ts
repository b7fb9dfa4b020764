import type { Counter, Gauge, Registry } from 'prom-client';
import { prom } from './prom-client.js';
import type { OutageMetrics } from '../runtime/manager/outage-gate.js';

/** What the operator sees of the API server: outages (the outage gate) and the resources it throttles. */
export class ApiServerMetrics {
  private readonly apiServerUnreachable: Gauge;
  private readonly apiServerOutages: Counter;

  constructor(private readonly registry: Registry) {
    const registers = [registry];
    this.apiServerUnreachable = new prom.Gauge({
      name: 'nestor_apiserver_unreachable',
      help: '1 while the API server gives no response and reconciles are held (the outage gate), else 0',
      registers,
    });
    this.apiServerUnreachable.set(0);
    this.apiServerOutages = new prom.Counter({
      name: 'nestor_apiserver_outages_total',
      help: 'Times the API server stopped answering and reconciles were held until it answered /readyz again',
      registers,
    });
  }

  /** The sink of the outage gate: whether reconciles are held for want of an API server. */
  outageSink(): OutageMetrics {
    return {
      holding: (held) => {
        this.apiServerUnreachable.set(held ? 1 : 0);
        if (held) this.apiServerOutages.inc();
      },
    };
  }

  /** Reads, when scraped, the resources the API server throttles (Transport.throttledResources). */
  trackThrottling(read: () => readonly string[]): void {
    new prom.Gauge({
      name: 'nestor_apiserver_throttled',
      help: '1 for a resource the API server throttles (answered 429): its requests go one at a time, widening as it answers',
      labelNames: ['resource'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const resource of read()) this.set({ resource }, 1);
      },
    });
  }
}
