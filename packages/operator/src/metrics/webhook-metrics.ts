import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { prom } from './prom-client.js';

/** controller-runtime's webhook metrics (its default buckets are prom-client's), and the denials. */
export class WebhookMetrics {
  private readonly webhookLatency: Histogram<'webhook'>;
  private readonly webhookRequests: Counter<'webhook' | 'code'>;
  private readonly webhookInFlight: Gauge<'webhook'>;
  private readonly webhookDenials: Counter<'webhook' | 'code'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.webhookLatency = new prom.Histogram({
      name: 'controller_runtime_webhook_latency_seconds',
      help: 'Histogram of the latency of processing admission requests',
      labelNames: ['webhook'],
      registers,
    });
    this.webhookRequests = new prom.Counter({
      name: 'controller_runtime_webhook_requests_total',
      help: 'Total number of admission requests by HTTP status code',
      labelNames: ['webhook', 'code'],
      registers,
    });
    this.webhookInFlight = new prom.Gauge({
      name: 'controller_runtime_webhook_requests_in_flight',
      help: 'Current number of admission requests being served',
      labelNames: ['webhook'],
      registers,
    });
    this.webhookDenials = new prom.Counter({
      name: 'nestor_webhook_denials_total',
      help: 'Reviews refused: admission answered allowed=false (code: the denial status code, 500 when the handler threw) and conversions answered Failure (code 500)',
      labelNames: ['webhook', 'code'],
      registers,
    });
  }

  /** The sink of the webhook server: requests per path (`webhook`), their latency and status, denials. */
  sink() {
    return {
      started: (webhook: string) => this.webhookInFlight.inc({ webhook }),
      finished: (webhook: string, code: number, seconds: number) => {
        this.webhookInFlight.dec({ webhook });
        this.webhookLatency.observe({ webhook }, seconds);
        this.webhookRequests.inc({ webhook, code: String(code) });
      },
      denied: (webhook: string, code: number) => this.webhookDenials.inc({ webhook, code: String(code) }),
      /** The paths served: their series exist from the start, at 0. */
      serving: (webhooks: readonly string[]) => {
        for (const webhook of webhooks) {
          this.webhookInFlight.set({ webhook }, 0);
          this.webhookLatency.zero({ webhook });
          this.webhookRequests.inc({ webhook, code: '200' }, 0);
        }
      },
    };
  }
}
