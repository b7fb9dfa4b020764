import { Module } from '@nestjs/common';
import { OperatorModule } from '@nestor/operator';
import { KubeconfigSecrets } from '@nestor/operator/fleet';
import { TeamSpaceModule } from './teamspace/teamspace.module.js';

/**
 * The operator, in the management cluster: the member clusters are the kubeconfig Secrets of
 * the operator's own namespace (where it is deployed: `nestor manifests --namespace
 * teamspace-system`) labelled `sigs.k8s.io/multicluster-runtime-kubeconfig=true`, each named
 * after its Secret. OperatorModule reads kubebuilder's manager flags or their variables for
 * the rest (--leader-elect, ...). A static module, so `nestor manifests --module
 * dist/app.module.js` finds the controller and grants the provider's rights on those Secrets,
 * in the namespace it deploys the operator to.
 */
@Module({
  imports: [OperatorModule.forRoot({ fleet: { providers: [new KubeconfigSecrets()] } }), TeamSpaceModule],
})
export class AppModule {}
