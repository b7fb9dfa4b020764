import { Module } from '@nestjs/common';
import { OperatorModule } from '@nestor/operator';
import { KubeconfigSecrets } from '@nestor/operator/fleet';
import { FLEET_NAMESPACE } from './teamspace/fleet-namespace.js';
import { TeamSpaceModule } from './teamspace/teamspace.module.js';

/**
 * The operator, in the management cluster: the member clusters are the kubeconfig Secrets of
 * FLEET_NAMESPACE labelled `sigs.k8s.io/multicluster-runtime-kubeconfig=true`, each named
 * after its Secret. OperatorModule reads kubebuilder's manager flags or their variables for
 * the rest (--leader-elect, ...). A static module, so `nestor manifests --module
 * dist/app.module.js` finds the controller and grants the provider's rights on those Secrets.
 */
@Module({
  imports: [
    OperatorModule.forRoot({ fleet: { providers: [new KubeconfigSecrets({ namespace: FLEET_NAMESPACE })] } }),
    TeamSpaceModule,
  ],
})
export class AppModule {}
