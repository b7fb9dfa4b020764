import {
  controllersOfModule,
  conversionsOfModule,
  deploymentSettings,
  operatorManifests,
  operatorOptionsOfModule,
  webhookNames,
  webhookServerSettings,
  webhooksOfModule,
  type OperatorManifests,
  type ScannedController,
} from '@nestor/operator/manifests';
import { webhookConfigurationsOf } from '@nestor/operator';
import type { ManifestsArguments } from './manifests-arguments.js';
import { loadModuleClass } from './root-module.js';

/** The controllers of the module and the manifests they need. */
export async function generateManifests(
  args: ManifestsArguments,
  cwd: string,
): Promise<{ controllers: ScannedController[]; manifests: OperatorManifests; moduleName: string; notes: string[] }> {
  const { module, name } = await loadModuleClass(args.module, args.export, cwd);
  const controllers = await controllersOfModule(module as never);
  if (controllers.length === 0) {
    throw new Error(
      `no @Controller classes in ${name} or the modules it imports: is --module the application's root module?`,
    );
  }
  const conversions = await conversionsOfModule(module as never);
  const scanned = await operatorOptionsOfModule(module as never);
  // The ports, namespace, leader election and grace the module's options fix, else the flags'.
  const { settings, notes } = deploymentSettings(scanned, {
    ...(args.metricsPort !== undefined ? { metricsPort: args.metricsPort } : {}),
    ...(args.healthPort !== undefined ? { healthPort: args.healthPort } : {}),
    ...(args.watchNamespace !== undefined ? { watchNamespace: args.watchNamespace } : {}),
  });
  // The webhook port and names the module fixes: the operator follows them, not the Deployment's variables.
  const { certificates, server } = webhookServerSettings(scanned, {
    namespace: args.namespace,
    ...(args.webhookCertificates ? { certificates: args.webhookCertificates } : {}),
  });
  const names = webhookNames(args.name);
  const configurations = webhookConfigurationsOf(await webhooksOfModule(module as never), {
    name: server.configurationName ?? names.configuration,
    service: { namespace: args.namespace, name: server.serviceName ?? names.service },
  });
  const manifests = operatorManifests({
    name: args.name,
    namespace: args.namespace,
    image: args.image,
    ...settings,
    ...(args.serviceMonitor ? { serviceMonitor: true } : {}),
    ...(args.metricsReaders ? { metricsReaders: args.metricsReaders } : {}),
    ...(args.metricsCertificates ? { metricsCertificates: args.metricsCertificates } : {}),
    controllers,
    members: controllers.flatMap((controller) => (controller.members ? [controller.members] : [])),
    // What the module's cluster providers read in this cluster (kubeconfig Secrets); a
    // provider given no namespace reads the operator's, the one the manifests deploy it to.
    fleet:
      scanned.from === 'static'
        ? (scanned.options.fleet?.providers ?? []).flatMap(
            (provider) => provider.permissions?.({ operatorNamespace: args.namespace }) ?? [],
          )
        : [],
    conversions: conversions.map((conversion) => conversion.hub),
    createNamespace: args.createNamespace ?? false,
    ...(args.noNetworkPolicy ? { networkPolicy: false } : {}),
    webhooks: { configurations, certificates: certificates ?? 'cert-manager', server },
  });
  return { controllers, manifests, moduleName: name, notes };
}
