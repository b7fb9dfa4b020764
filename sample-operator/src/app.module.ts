import { Module } from '@nestjs/common';
import { OperatorModule, readOperatorFlags, type OperatorModuleOptions } from '@nestor/operator';
import { InventoryModule } from './inventory/inventory.module.js';
import type { InventoryOptions } from './inventory/inventory.options.js';
import { MemcachedWebhookModule } from './memcached/memcached-webhook.module.js';
import { MemcachedModule } from './memcached/memcached.module.js';

export interface AppOptions {
  operator: OperatorModuleOptions;
  inventory: InventoryOptions;
}

/**
 * The operator's own settings. What a Deployment sets for the framework (kubebuilder's
 * manager flags, or their variables) OperatorModule reads itself, so they are left out of
 * its options here:
 *   --kubeconfig / KUBECONFIG               the cluster (default: in-cluster, then ~/.kube/config)
 *   --namespace / WATCH_NAMESPACE           watch one namespace (default: all)
 *   --leader-elect / LEADER_ELECT=true      one active replica, with
 *   --leader-election-id / LEADER_ELECTION_ID   the Lease's name (nestor manifests sets both)
 *   --metrics-bind-address / METRICS_BIND_ADDRESS   Prometheus /metrics (default :8080; 0: off)
 *   --metrics-secure / METRICS_SECURE       true (default): HTTPS, callers authorized by the API server
 *   --health-probe-bind-address / HEALTH_PROBE_BIND_ADDRESS   /healthz and /readyz (default :8081; 0: off)
 *   --webhook-port / WEBHOOK_PORT, --webhook-cert-path / WEBHOOK_CERT_PATH,
 *   --webhook-certificates / WEBHOOK_CERTIFICATES=self-managed   the webhook server (Memcached admission)
 * This application's own:
 *   INVENTORY_NAMESPACE where the inventory ConfigMaps go (default: the watched namespace, else "default")
 *   INVENTORY_POLL_MS   how often the inventory is polled (default 5000)
 */
export function appOptionsFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  argv: readonly string[] = process.argv.slice(2),
): AppOptions {
  const pollMs = Number(env.INVENTORY_POLL_MS ?? 5000);
  if (!(pollMs > 0))
    throw new Error(`INVENTORY_POLL_MS=${env.INVENTORY_POLL_MS} is not a positive number of milliseconds`);
  // The namespace the operator will watch, as OperatorModule reads it (--namespace, else WATCH_NAMESPACE).
  const watched = readOperatorFlags(argv, env).namespace;
  return {
    operator: {},
    inventory: {
      namespace: env.INVENTORY_NAMESPACE || watched || 'default',
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
