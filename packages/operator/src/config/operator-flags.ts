import type { KubeConfigSource } from '@nestor/core';
import type { HealthServerOptions, MetricsServerOptions, WebhookServingOptions } from '../serving/serving-options.js';

/**
 * The settings a deployment gives an operator without code: kubebuilder's manager flags
 * (`--metrics-bind-address=:8443`, `--leader-elect`, ...) and the same as environment
 * variables (`METRICS_BIND_ADDRESS`, `LEADER_ELECT`, ...), for a container spec's `args` or
 * `env`. What `OperatorModule.forRoot()` (or a Nest-free program's own settings) sets wins;
 * these fill what it leaves out; a flag wins over its variable.
 */
export interface OperatorFlags {
  kubeconfig?: string;
  namespace?: string;
  leaderElect?: boolean;
  leaderElectionId?: string;
  leaderElectionNamespace?: string;
  metrics?: BindAddress;
  metricsSecure?: boolean;
  metricsCertDir?: string;
  health?: BindAddress;
  webhookPort?: number;
  webhookCertDir?: string;
  webhookCertificates?: string;
  webhookSecretName?: string;
  webhookServiceName?: string;
  webhookConfigurationName?: string;
  webhookConversionCrds?: string;
}

/** `host:port`, `:port` (every interface) or `0` (off), as Go's net.Listen and kubebuilder take it. */
export interface BindAddress {
  host?: string;
  port: number;
}

type Kind = 'string' | 'boolean' | 'address' | 'port';

// flag name, variable name, field, kind
const FLAGS: ReadonlyArray<readonly [string, string, keyof OperatorFlags, Kind]> = [
  ['kubeconfig', 'KUBECONFIG', 'kubeconfig', 'string'],
  ['namespace', 'WATCH_NAMESPACE', 'namespace', 'string'],
  ['leader-elect', 'LEADER_ELECT', 'leaderElect', 'boolean'],
  ['leader-election-id', 'LEADER_ELECTION_ID', 'leaderElectionId', 'string'],
  ['leader-election-namespace', 'LEADER_ELECTION_NAMESPACE', 'leaderElectionNamespace', 'string'],
  ['metrics-bind-address', 'METRICS_BIND_ADDRESS', 'metrics', 'address'],
  ['metrics-secure', 'METRICS_SECURE', 'metricsSecure', 'boolean'],
  ['metrics-cert-path', 'METRICS_CERT_PATH', 'metricsCertDir', 'string'],
  ['health-probe-bind-address', 'HEALTH_PROBE_BIND_ADDRESS', 'health', 'address'],
  ['webhook-port', 'WEBHOOK_PORT', 'webhookPort', 'port'],
  ['webhook-cert-path', 'WEBHOOK_CERT_PATH', 'webhookCertDir', 'string'],
  ['webhook-certificates', 'WEBHOOK_CERTIFICATES', 'webhookCertificates', 'string'],
  ['webhook-secret-name', 'WEBHOOK_SECRET_NAME', 'webhookSecretName', 'string'],
  ['webhook-service-name', 'WEBHOOK_SERVICE_NAME', 'webhookServiceName', 'string'],
  ['webhook-configuration-name', 'WEBHOOK_CONFIGURATION_NAME', 'webhookConfigurationName', 'string'],
  ['webhook-conversion-crds', 'WEBHOOK_CONVERSION_CRDS', 'webhookConversionCrds', 'string'],
];

/** Every flag and variable read, for documentation and error messages. */
export const OPERATOR_FLAG_NAMES: ReadonlyArray<{ flag: string; variable: string }> = FLAGS.map(([flag, variable]) => ({
  flag: `--${flag}`,
  variable,
}));

/**
 * Reads the flags from argv (unknown arguments are the application's and are left alone)
 * and, for those not given, the environment. `KUBECONFIG` is not read here: the
 * kubeconfig search reads it after the flag.
 */
export function readOperatorFlags(
  argv: readonly string[] = process.argv.slice(2),
  env: Readonly<Record<string, string | undefined>> = process.env,
): OperatorFlags {
  const flags: Record<string, unknown> = {};
  for (const [flag, variable, field, kind] of FLAGS) {
    const fromArgs = flagValue(argv, flag, kind);
    if (fromArgs !== undefined) flags[field] = parse(fromArgs, `--${flag}`, kind);
    else if (variable !== 'KUBECONFIG' && env[variable] !== undefined && env[variable] !== '')
      flags[field] = parse(env[variable]!, variable, kind);
  }
  return flags as OperatorFlags;
}

/**
 * The settings the flags can fill: `OperatorModuleOptions` has this shape, and so can a
 * Nest-free program's own settings, whose `metrics`, `health` and `webhooks` go to the
 * serving layer's servers as they are.
 */
export interface FlaggableOptions {
  kubeConfig?: KubeConfigSource | string;
  namespace?: string;
  leaderElection?: { id: string; namespace?: string };
  metrics?: MetricsServerOptions;
  health?: HealthServerOptions;
  webhooks?: WebhookServingOptions;
}

/** The options with what they leave out taken from the flags. */
export function withOperatorFlags<T extends FlaggableOptions>(options: T, flags: OperatorFlags): T & FlaggableOptions {
  const merged: FlaggableOptions = { ...options };
  if (merged.kubeConfig === undefined && flags.kubeconfig) merged.kubeConfig = flags.kubeconfig;
  if (merged.namespace === undefined && flags.namespace) merged.namespace = flags.namespace;

  if (merged.leaderElection === undefined && flags.leaderElect) {
    if (!flags.leaderElectionId)
      throw new Error(
        'leader election is switched on (--leader-elect or LEADER_ELECT) but has no Lease name: ' +
          'set --leader-election-id or LEADER_ELECTION_ID (e.g. the operator’s name), or leaderElection: { id } in OperatorModule.forRoot()',
      );
    merged.leaderElection = {
      id: flags.leaderElectionId,
      ...(flags.leaderElectionNamespace ? { namespace: flags.leaderElectionNamespace } : {}),
    };
  }

  const metrics = { ...merged.metrics };
  if (metrics.port === undefined && flags.metrics) {
    metrics.port = flags.metrics.port;
    if (metrics.host === undefined && flags.metrics.host !== undefined) metrics.host = flags.metrics.host;
  }
  if (metrics.secure === undefined && flags.metricsSecure !== undefined) metrics.secure = flags.metricsSecure;
  if (metrics.certDir === undefined && flags.metricsCertDir) metrics.certDir = flags.metricsCertDir;
  if (Object.keys(metrics).length) merged.metrics = metrics;

  const health = { ...merged.health };
  if (health.port === undefined && flags.health) {
    health.port = flags.health.port;
    if (health.host === undefined && flags.health.host !== undefined) health.host = flags.health.host;
  }
  if (Object.keys(health).length) merged.health = health;

  const webhooks = { ...merged.webhooks };
  if (webhooks.port === undefined && flags.webhookPort !== undefined) webhooks.port = flags.webhookPort;
  if (webhooks.certDir === undefined && flags.webhookCertDir) webhooks.certDir = flags.webhookCertDir;
  if (webhooks.certificates === undefined && flags.webhookCertificates) {
    if (flags.webhookCertificates !== 'files' && flags.webhookCertificates !== 'self-managed')
      throw new Error(
        `--webhook-certificates (WEBHOOK_CERTIFICATES) is ${shown(flags.webhookCertificates)}: use files (cert-manager's mounted Secret) or self-managed`,
      );
    webhooks.certificates = flags.webhookCertificates;
  }
  const selfManaged = { ...webhooks.selfManaged };
  if (selfManaged.secretName === undefined && flags.webhookSecretName) selfManaged.secretName = flags.webhookSecretName;
  if (selfManaged.serviceName === undefined && flags.webhookServiceName)
    selfManaged.serviceName = flags.webhookServiceName;
  if (selfManaged.configurationName === undefined && flags.webhookConfigurationName)
    selfManaged.configurationName = flags.webhookConfigurationName;
  if (selfManaged.conversionCustomResourceDefinitions === undefined && flags.webhookConversionCrds)
    selfManaged.conversionCustomResourceDefinitions = flags.webhookConversionCrds
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean);
  if (Object.keys(selfManaged).length) webhooks.selfManaged = selfManaged;
  if (Object.keys(webhooks).length) merged.webhooks = webhooks;
  return merged as T & FlaggableOptions;
}

/** `--name=value`, `--name value` (not for booleans) or a bare `--name` (booleans); the last one wins. */
function flagValue(argv: readonly string[], name: string, kind: Kind): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') break;
    if (arg.startsWith(`--${name}=`)) value = arg.slice(name.length + 3);
    else if (arg === `--${name}`) {
      if (kind === 'boolean') value = 'true';
      else if (i + 1 < argv.length && !argv[i + 1]!.startsWith('--')) value = argv[++i]!;
      else throw new Error(`--${name} needs a value: --${name}=<value>`);
    }
  }
  return value;
}

function parse(value: string, source: string, kind: Kind): unknown {
  switch (kind) {
    case 'string':
      return value;
    case 'boolean':
      if (/^(true|1)$/i.test(value)) return true;
      if (/^(false|0)$/i.test(value)) return false;
      throw new Error(`${source}=${shown(value)} is not a boolean: use true or false`);
    case 'port':
      return port(value, source);
    case 'address':
      return bindAddress(value, source);
  }
}

function port(value: string, source: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535)
    throw new Error(`${source}=${shown(value)} is not a port number (0-65535; 0 turns it off)`);
  return n;
}

/**
 * `0` -> off; `:8443` -> every interface; `127.0.0.1:8080`, `localhost:8080`, `[::1]:8080`
 * (with a zone: `[fe80::1%eth0]:8080`). A host is an IP address or a DNS name: Go would take
 * anything and fail at listen time with a lookup error; this says so at start-up.
 */
export function bindAddress(value: string, source = 'address'): BindAddress {
  if (value === '0') return { port: 0 };
  const match = /^(?:\[([0-9a-fA-F:.]+(?:%[\w.-]+)?)\]|([\w.-]*)):(\d+)$/.exec(value);
  if (!match)
    throw new Error(
      `${source}=${shown(value)} is not a bind address: use host:port (an IP address or a DNS name), :port for every interface, or 0 to turn it off`,
    );
  const host = match[1] ?? match[2];
  return { port: port(match[3]!, source), ...(host ? { host } : {}) };
}

/**
 * A value as an error shows it: as it is when short and printable, else quoted and cut,
 * so that a stray newline or a megabyte in a variable does not garble the log line.
 */
function shown(value: string): string {
  if (/^[\x21-\x7e]{1,80}$/.test(value)) return value;
  const quoted = JSON.stringify(value.length > 80 ? value.slice(0, 80) : value);
  return value.length > 80 ? `${quoted} (${value.length} characters)` : quoted;
}
