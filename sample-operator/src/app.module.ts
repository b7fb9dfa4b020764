import { Module } from '@nestjs/common';
import { OperatorModule, type OperatorModuleOptions } from '@nestor/operator';
import { InventoryModule } from './inventory/inventory.module.js';
import type { InventoryOptions } from './inventory/inventory.options.js';
import { MemcachedWebhookModule } from './memcached/memcached-webhook.module.js';
import { MemcachedModule } from './memcached/memcached.module.js';

export interface AppOptions {
  operator: OperatorModuleOptions;
  inventory: InventoryOptions;
}

/**
 * The operator's settings from its environment (what a Deployment manifest sets):
 *   KUBECONFIG          the cluster (default: in-cluster, then ~/.kube/config)
 *   WATCH_NAMESPACE     watch one namespace (default: all)
 *   LEADER_ELECT=true   one active replica, elected through the Lease "memcached-operator"
 *   METRICS_PORT        Prometheus /metrics (default 8080, as controller-runtime; 0: off)
 *   METRICS_SECURE      true (default): HTTPS, callers authorized by the API server; false: plain HTTP
 *   HEALTH_PORT         /healthz and /readyz (default 8081, as controller-runtime; 0: off)
 *   INVENTORY_NAMESPACE where the inventory ConfigMaps go (default: WATCH_NAMESPACE, else "default")
 *   INVENTORY_POLL_MS   how often the inventory is polled (default 5000)
 * and the webhook server's (Memcached admission): WEBHOOK_PORT (default 9443; 0: off),
 * WEBHOOK_CERT_PATH, or WEBHOOK_CERTIFICATES=self-managed (read by OperatorModule).
 */
export function appOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): AppOptions {
  const port = (name: string, fallback: number) => {
    const value = env[name] ?? String(fallback);
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0 || n > 65535)
      throw new Error(`${name}=${value} is not a port number (0 turns it off)`);
    return n;
  };
  const secure = env.METRICS_SECURE ?? 'true';
  if (secure !== 'true' && secure !== 'false')
    throw new Error(`METRICS_SECURE=${secure} is neither true (HTTPS with authorization) nor false (plain HTTP)`);
  const pollMs = Number(env.INVENTORY_POLL_MS ?? 5000);
  if (!(pollMs > 0))
    throw new Error(`INVENTORY_POLL_MS=${env.INVENTORY_POLL_MS} is not a positive number of milliseconds`);
  return {
    operator: {
      ...(env.WATCH_NAMESPACE ? { namespace: env.WATCH_NAMESPACE } : {}),
      ...(env.LEADER_ELECT === 'true' ? { leaderElection: { id: 'memcached-operator' } } : {}),
      metrics: { port: port('METRICS_PORT', 8080), secure: secure === 'true' },
      health: { port: port('HEALTH_PORT', 8081) },
    },
    inventory: {
      namespace: env.INVENTORY_NAMESPACE || env.WATCH_NAMESPACE || 'default',
      pollIntervalMs: pollMs,
      records: [
        { id: 'sku-1001', name: 'memcached t-shirt', quantity: 12, warehouse: 'berlin' },
        { id: 'sku-1002', name: 'operator mug', quantity: 3, warehouse: 'lisbon' },
      ],
    },
  };
}

/** The settings this process runs with (read once, when this file is imported). */
export const appOptions = appOptionsFromEnv();

/**
 * The sample operator: the Memcached controller and its admission webhook, and the inventory
 * controller, on one manager.
 * A static module, so `nestor manifests --module dist/app.module.js` finds its controllers.
 */
@Module({
  imports: [
    OperatorModule.forRoot(appOptions.operator),
    MemcachedModule,
    MemcachedWebhookModule,
    InventoryModule.forRoot(appOptions.inventory),
  ],
})
export class AppModule {}
