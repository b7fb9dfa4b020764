import { Module } from '@nestjs/common';
import { OperatorModule } from '@nestor/operator';
import { CacheClusterModule } from './cache-cluster/cache-cluster.module.js';

/**
 * The operator: OperatorModule reads kubebuilder's manager flags or their variables itself
 * (--namespace / WATCH_NAMESPACE, --leader-elect, --webhook-port, ...). A static module, so
 * `nestor manifests --module dist/app.module.js` finds the controller and the webhook.
 */
@Module({
  imports: [OperatorModule.forRoot(), CacheClusterModule],
})
export class AppModule {}
