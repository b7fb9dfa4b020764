import type { OperatorSetting, OperatorSettings } from '../manifests/operator-settings.js';
import type { WebhookCertificates, WebhookServerSettings } from '../manifests/webhook-manifests.js';
import { httpEndpoints } from '../serving/http-endpoints.js';
import {
  DEFAULT_WEBHOOK_CONFIGURATION,
  DEFAULT_WEBHOOK_SECRET,
  DEFAULT_WEBHOOK_SERVICE,
} from '../serving/webhook-certificates.js';
import type { ScannedOperatorOptions } from './module-scanner.js';

/** What `nestor manifests` is asked for on its command line. */
export interface DeploymentRequest {
  /** `--metrics-port` */
  metricsPort?: number;
  /** `--health-port` */
  healthPort?: number;
  /** `--watch-namespace` */
  watchNamespace?: string;
}

/**
 * The settings the generated objects must agree on (ports, namespace, leader election,
 * shutdown grace), from the module's `OperatorModule.forRoot()` options where it sets them,
 * else from the command line, passed to the operator as the variables of its flags. An
 * option the module sets wins over any flag at run time, so a command line that asks for
 * something else is refused rather than written into objects the operator would ignore.
 */
export function deploymentSettings(
  scanned: ScannedOperatorOptions,
  request: DeploymentRequest = {},
): { settings: OperatorSettings; notes: string[] } {
  if (scanned.from !== 'static') {
    const notes =
      scanned.from === 'runtime'
        ? [
            'OperatorModule.forRootAsync() builds its options at start-up: the Deployment passes the ports, namespace and ' +
              'leader election as variables (--metrics-port, --health-port, --watch-namespace or their defaults); ' +
              'what the factory sets itself wins over them and must match (the webhook port 9443 and certificate names too), ' +
              'and the shutdown grace is taken as 30 s',
          ]
        : [];
    return { settings: fromRequest(request), notes };
  }
  const options = scanned.options;
  const readsFlags = options.readFlags !== false;
  const setByModule: OperatorSetting[] = [];
  const fixed = (setting: OperatorSetting) => {
    if (readsFlags) setByModule.push(setting);
  };
  // Without flags, the module's ports or the framework's defaults (and its errors, as at start-up).
  const endpoints = readsFlags ? undefined : httpEndpoints(options);

  const settings: OperatorSettings = {};
  const metricsPort = options.metrics?.port ?? (endpoints ? (endpoints.metrics?.port ?? 0) : undefined);
  if (metricsPort !== undefined) {
    refuseOther('--metrics-port', request.metricsPort, metricsPort, 'metrics.port', readsFlags);
    settings.metricsPort = metricsPort;
    fixed('metrics');
  } else if (request.metricsPort !== undefined) settings.metricsPort = request.metricsPort;
  // As httpEndpoints: HTTPS by default, callers checked when secure.
  const secure = options.metrics?.secure ?? true;
  settings.metricsSecure = secure;
  settings.metricsAuth = options.metrics?.auth ?? secure;

  const healthPort = options.health?.port ?? (endpoints ? (endpoints.health?.port ?? 0) : undefined);
  if (healthPort !== undefined) {
    refuseOther('--health-port', request.healthPort, healthPort, 'health.port', readsFlags);
    settings.healthPort = healthPort;
    fixed('health');
  } else if (request.healthPort !== undefined) settings.healthPort = request.healthPort;

  if (options.namespace !== undefined || !readsFlags) {
    refuseOther('--watch-namespace', request.watchNamespace, options.namespace, 'namespace', readsFlags);
    if (options.namespace) settings.watchNamespace = options.namespace;
    fixed('watchNamespace');
  } else if (request.watchNamespace) settings.watchNamespace = request.watchNamespace;

  if (options.leaderElection) {
    settings.leaderElection = {
      id: options.leaderElection.id,
      ...(options.leaderElection.namespace ? { namespace: options.leaderElection.namespace } : {}),
    };
    fixed('leaderElection');
  } else if (!readsFlags) settings.leaderElection = false;

  if (options.sharding) {
    settings.shardReplicas =
      (options.sharding === true ? undefined : options.sharding.replicas) ?? DEFAULT_SHARD_REPLICAS;
  }
  if (options.shutdownGraceMs !== undefined) settings.shutdownGraceMs = options.shutdownGraceMs;
  if (options.migrateStorageVersions !== undefined)
    settings.storageMigration = options.migrateStorageVersions !== false;
  settings.setByModule = readsFlags ? setByModule : 'all';
  return { settings, notes: [] };
}

/** Replicas of a sharded operator's Deployment when its `sharding` option names none. */
export const DEFAULT_SHARD_REPLICAS = 3;

function fromRequest(request: DeploymentRequest): OperatorSettings {
  return {
    ...(request.metricsPort !== undefined ? { metricsPort: request.metricsPort } : {}),
    ...(request.healthPort !== undefined ? { healthPort: request.healthPort } : {}),
    ...(request.watchNamespace ? { watchNamespace: request.watchNamespace } : {}),
  };
}

/** A flag asking for something other than what the module's option fixes. */
function refuseOther<T>(
  flag: string,
  requested: T | undefined,
  fixed: T | undefined,
  option: string,
  readsFlags: boolean,
): void {
  if (requested === undefined || requested === fixed) return;
  throw new Error(
    readsFlags
      ? `${flag} ${String(requested)}, but the module's OperatorModule.forRoot() sets ${option} to ${String(fixed)}, ` +
          `which wins over the flag in the operator: drop ${flag}, or change ${option} in the module (or leave it out)`
      : `${flag} ${String(requested)}, but the module's OperatorModule.forRoot() has readFlags: false, so the operator ` +
          `reads no flags and ${option} is ${fixed === undefined ? 'unset' : String(fixed)}: drop ${flag}, or set ${option} in the module`,
  );
}

/** What `nestor manifests` is asked for of the webhook server on its command line. */
export interface WebhookRequest {
  /** `--webhook-certificates`, when given. */
  certificates?: WebhookCertificates;
  /** `--namespace`: where the operator runs, and so where its self-managed Secret is. */
  namespace: string;
}

/**
 * The webhook server as the module's `webhooks` options fix it, which the operator follows
 * whatever the Deployment's variables say (or reads none of, with `readFlags: false`): the
 * port, the certificate's mode and files, the self-managed names. The webhook objects are
 * made to match; a command line or a namespace they cannot match is refused.
 */
export function webhookServerSettings(
  scanned: ScannedOperatorOptions,
  request: WebhookRequest,
): { certificates?: WebhookCertificates; server: WebhookServerSettings } {
  const given = request.certificates ? { certificates: request.certificates } : {};
  if (scanned.from !== 'static') return { ...given, server: {} };
  const readsFlags = scanned.options.readFlags !== false;
  const webhooks = scanned.options.webhooks ?? {};
  const selfManaged = webhooks.selfManaged ?? {};
  // Without flags the operator keeps its own defaults: files (cert-manager's mount), kubebuilder's names.
  const fixedMode = webhooks.certificates ?? (readsFlags ? undefined : 'files');
  const moduleMode = fixedMode && (fixedMode === 'files' ? 'cert-manager' : 'self-managed');
  // OLM mounts its certificate as files, where cert-manager's would be.
  const olm = request.certificates === 'olm';
  if (olm && moduleMode === 'self-managed')
    throw new Error(
      "--olm: OLM makes the webhook certificate and mounts it, but the module's OperatorModule.forRoot() sets " +
        'webhooks.certificates to self-managed: leave webhooks.certificates out (or set it to files)',
    );
  if (request.certificates && moduleMode && request.certificates !== moduleMode && !olm)
    throw new Error(
      `--webhook-certificates ${request.certificates}, but the module's OperatorModule.forRoot() ` +
        (webhooks.certificates
          ? `sets webhooks.certificates to ${webhooks.certificates}, which wins over the flag in the operator`
          : 'has readFlags: false, so the operator reads its certificate from files (cert-manager)') +
        `: drop --webhook-certificates, or change webhooks.certificates in the module`,
    );
  const certificates = olm ? 'olm' : (moduleMode ?? request.certificates);
  if (certificates === 'self-managed' && selfManaged.namespace && selfManaged.namespace !== request.namespace)
    throw new Error(
      `the module keeps its webhook certificate in the namespace ${selfManaged.namespace} (webhooks.selfManaged.namespace), ` +
        `but the operator runs in ${request.namespace}, where its Secret's Role is: use --namespace ${selfManaged.namespace}, ` +
        'or leave webhooks.selfManaged.namespace out',
    );
  const defaults = certificates === 'self-managed' && !readsFlags;
  const name = (set: string | undefined, fallback: string) => set ?? (defaults ? fallback : undefined);
  const server: WebhookServerSettings = {};
  const set = <K extends keyof WebhookServerSettings>(key: K, value: WebhookServerSettings[K] | undefined) => {
    if (value !== undefined) server[key] = value;
  };
  set('port', webhooks.port);
  set('certDir', webhooks.certDir);
  set('certName', webhooks.certName);
  set('keyName', webhooks.keyName);
  set('secretName', name(selfManaged.secretName, DEFAULT_WEBHOOK_SECRET));
  set('serviceName', name(selfManaged.serviceName, DEFAULT_WEBHOOK_SERVICE));
  set('configurationName', name(selfManaged.configurationName, DEFAULT_WEBHOOK_CONFIGURATION));
  return { ...(certificates ? { certificates } : {}), server };
}
