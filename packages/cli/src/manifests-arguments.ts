import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { WebhookCertificates } from '@nestor/operator/manifests';
import { UsageError } from './command-io.js';
import { ALLOWANCES_FILE, storedVersionsOf, type CompatibilityRequest } from './compat/compatibility-check.js';
import { GRAFANA_OPTIONS, GRAFANA_USAGE, grafanaArguments, type GrafanaArguments } from './grafana-output.js';
import { olmConfigNear, OLM_CONFIG_FILE, type OlmRequest } from './olm/olm-config.js';

// The command line of `nestor manifests`: its usage, and its reading into ManifestsArguments.

export const MANIFESTS_USAGE = `Usage: nestor manifests --module <compiled-module.js> [options]

Writes what an operator needs in a cluster, from its decorators: the CRDs of the
@CustomResource kinds its controllers use, a ServiceAccount with least-privilege RBAC (a
Role in the namespace when every controller watches one, else a ClusterRole), a
leader-election Role, a Deployment, and the Service of its secure /metrics
(<name>-metrics-service) with the metrics-reader ClusterRole for Prometheus. The CRD of a
kind with a @Conversion class converts through the webhook Service (<name>-webhook-service).
With @Webhook or @Conversion classes: the Validating/MutatingWebhookConfigurations, the
webhook Service (443 -> 9443) and its certificate (cert-manager's Issuer and Certificate,
or the self-managed mode's RBAC).

The module is imported, not started: no provider runs and no cluster is needed. What its
OperatorModule.forRoot() options set (metrics.port, health.port, namespace, leaderElection,
shutdownGraceMs) is what the objects follow; the flags above fill in what they leave out,
and the Deployment passes those to the operator as the variables of its flags.
Whatever the module prints goes to stderr, and the command exits once the manifests
are out, whatever timers or servers the module started.

Options:
  --module <path>      the compiled JavaScript file of the application's root module (required)
  --export <name>      the module's export name (default: AppModule, else the default export,
                       else the file's only Nest module)
  --out <dir>          write one kustomization per folder there, and a README.md, all
                       files or none (default: print one YAML stream to stdout)
  --name <name>        the operator's name: ServiceAccount, ClusterRole, Deployment
                       (default: the package.json name next to the module, without its scope)
  --namespace <ns>     the namespace it runs in (default: <name>-system); it must exist,
                       unless --create-namespace
  --create-namespace   write a Namespace too, in a folder of its own
  --image <image>      its container image (default: <name>:latest)
  --metrics-port <port>
                       where the operator serves /metrics, the metrics Service's port
                       (default 8443; 0: no metrics); passed as METRICS_BIND_ADDRESS
  --health-port <port> where it answers the kubelet's /healthz and /readyz probes
                       (default 8081; 0: no probes); passed as HEALTH_PROBE_BIND_ADDRESS
  --watch-namespace <ns>
                       watch only this namespace (WATCH_NAMESPACE): the controllers' rights
                       become a Role there
  --service-monitor    a Prometheus Operator ServiceMonitor for the metrics Service
  --metrics-certificates cert-manager|self-signed
                       where the metrics certificate comes from (default cert-manager when
                       the webhooks' does, else self-signed: made by the operator, scraped
                       with insecureSkipVerify; cert-manager: a Certificate for the metrics
                       Service, mounted, the ServiceMonitor verifying it)
  --metrics-reader <namespace>/<serviceaccount>
                       bind this ServiceAccount (Prometheus') to the metrics-reader
                       ClusterRole; repeatable
  --webhook-certificates cert-manager|self-managed
                       how the webhook server gets its certificate (default cert-manager:
                       an Issuer and a Certificate, the Secret mounted, cainjector filling
                       the caBundles; self-managed: the operator keeps a CA in a Secret and
                       patches the caBundles itself, with RBAC for that)
  --helm <dir>         write a Helm chart there instead, all files or none: Chart.yaml,
                       values.yaml (image, replicas, resources, leader election, metrics,
                       webhooks, CRDs, NetworkPolicies), templates/ (docs/helm.md)
  --olm <dir>          write an OLM bundle there instead, all files or none: manifests/
                       (the ClusterServiceVersion, the CRDs, the other objects),
                       metadata/annotations.yaml and bundle.Dockerfile; what no decorator
                       says (display name, description, maintainers, provider, icon,
                       capability level, channels, minKubeVersion) comes from
                       ${OLM_CONFIG_FILE} beside the package.json near the module
                       (docs/upgrades.md)
  --olm-config <file>  another file than ${OLM_CONFIG_FILE} for --olm
  --no-network-policy  leave out the NetworkPolicies (written by default: /metrics open only
                       to namespaces labelled metrics=enabled and those of --metrics-reader,
                       the webhook port to all, every other port of the pods closed)
${GRAFANA_USAGE}
  --check <path>       first compare the CRDs with the previous release's (its nestor
                       manifests folder or output, or CRD files; repeatable) and, when a
                       change breaks stored objects or their clients, report each one and
                       write nothing (exit 1); docs/upgrades.md
  --allow <file>       the breaking changes accepted on purpose, each with its reason
                       (default: ${ALLOWANCES_FILE} beside the package.json near the module)
  --stored-versions <crd>=<versions>
                       the versions the cluster stores a CRD's objects in (its
                       status.storedVersions), e.g. widgets.example.com=v1; repeatable
  -h, --help           show this help

With --out <dir>, apply its folders in this order, each a kustomization of its own:
  kubectl apply -k <dir>/crds        the CRDs
  kubectl apply -k <dir>/namespace   the Namespace (only with --create-namespace)
  kubectl apply -k <dir>/operator    ServiceAccount, RBAC, Deployment
  kubectl apply -k <dir>/network-policy
                                     NetworkPolicies for the metrics and webhook ports
<dir>/README.md says so, and how to uninstall: kubectl delete -k <dir>/operator deletes
the operator alone, and leaves the CRDs, the custom resources and the namespace.
Deleting <dir>/crds deletes every custom resource of those kinds in the cluster;
deleting <dir>/namespace deletes everything in the namespace.

Without --out, one stream of them all, for: nestor manifests ... | kubectl apply -f -
(kubectl delete -f on that stream deletes the CRDs too: to uninstall the operator alone,
use --out)`;

export interface ManifestsArguments {
  module: string;
  export?: string;
  out?: string;
  name: string;
  namespace: string;
  /** Write a Namespace (in its own folder with --out). */
  createNamespace?: boolean;
  image: string;
  webhookCertificates?: WebhookCertificates;
  metricsPort?: number;
  healthPort?: number;
  watchNamespace?: string;
  serviceMonitor?: boolean;
  metricsReaders?: string[];
  metricsCertificates?: 'cert-manager' | 'self-signed';
  /** Leave out the NetworkPolicies (`--no-network-policy`). */
  noNetworkPolicy?: boolean;
  /** Write a Helm chart to this folder (`--helm`). */
  helm?: string;
  /** Grafana dashboards, written to a folder of their own (`--grafana`, grafana-output.ts). */
  grafana?: GrafanaArguments;
  /** Compare the CRDs with the previous release's before writing (`--check`, compat/). */
  check?: CompatibilityRequest;
  /** Write an OLM bundle to this folder (`--olm`, olm/). */
  olm?: OlmRequest;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Reads the command line of `nestor manifests`; throws a UsageError naming what is wrong. */
export function parseManifestsArguments(argv: string[], cwd: string): ManifestsArguments | 'help' {
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        module: { type: 'string' },
        export: { type: 'string' },
        out: { type: 'string' },
        name: { type: 'string' },
        namespace: { type: 'string' },
        'create-namespace': { type: 'boolean' },
        image: { type: 'string' },
        'webhook-certificates': { type: 'string' },
        'metrics-port': { type: 'string' },
        'health-port': { type: 'string' },
        'watch-namespace': { type: 'string' },
        'service-monitor': { type: 'boolean' },
        'metrics-certificates': { type: 'string' },
        'metrics-reader': { type: 'string', multiple: true },
        'no-network-policy': { type: 'boolean' },
        helm: { type: 'string' },
        olm: { type: 'string' },
        'olm-config': { type: 'string' },
        check: { type: 'string', multiple: true },
        allow: { type: 'string' },
        'stored-versions': { type: 'string', multiple: true },
        ...GRAFANA_OPTIONS,
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) return 'help';
  const modulePath = values.module as string | undefined;
  if (!modulePath)
    throw new UsageError(
      '--module is required: the compiled file of the root module, e.g. --module dist/app.module.js',
    );
  const name = (values.name as string | undefined) ?? packageNameNear(resolve(cwd, modulePath)) ?? 'operator';
  const namespace = (values.namespace as string | undefined) ?? `${name}-system`;
  const watchNamespace = values['watch-namespace'] as string | undefined;
  for (const [flag, value] of [
    ['--name', name],
    ['--namespace', namespace],
    ...(watchNamespace !== undefined ? [['--watch-namespace', watchNamespace] as const] : []),
  ] as const) {
    if (value.length > 63 || !DNS_LABEL.test(value)) {
      throw new UsageError(
        `${flag} "${value}" is not a valid Kubernetes name: lower-case letters, digits and '-', at most 63 characters`,
      );
    }
  }
  const webhookCertificates = values['webhook-certificates'] as string | undefined;
  if (
    webhookCertificates !== undefined &&
    webhookCertificates !== 'cert-manager' &&
    webhookCertificates !== 'self-managed'
  ) {
    throw new UsageError(`--webhook-certificates ${webhookCertificates}: use cert-manager or self-managed`);
  }
  const port = (flag: string) => {
    const value = values[flag] as string | undefined;
    if (value === undefined) return undefined;
    if (!/^\d+$/.test(value) || Number(value) > 65535)
      throw new UsageError(`--${flag} ${value} is not a port number: use 1-65535, or 0 for none`);
    return Number(value);
  };
  const metricsPort = port('metrics-port');
  const healthPort = port('health-port');
  if (metricsPort && metricsPort === healthPort)
    throw new UsageError(`--metrics-port and --health-port are both ${metricsPort}: give them different ports`);
  const metricsCertificates = values['metrics-certificates'] as string | undefined;
  if (
    metricsCertificates !== undefined &&
    metricsCertificates !== 'cert-manager' &&
    metricsCertificates !== 'self-signed'
  ) {
    throw new UsageError(`--metrics-certificates ${metricsCertificates}: use cert-manager or self-signed`);
  }
  if (values.helm && values.out) throw new UsageError('--helm and --out: choose one, a chart or kustomize folders');
  if (values.helm && values['create-namespace'])
    throw new UsageError(
      '--create-namespace: a chart installs into the release namespace; helm install --create-namespace makes it',
    );
  const olm = olmRequest(values, resolve(cwd, modulePath), cwd);
  if (olm && metricsCertificates === 'cert-manager')
    throw new UsageError(
      '--metrics-certificates cert-manager: a bundle carries no cert-manager objects (OLM installs none); leave it out with --olm',
    );
  const metricsReaders = (values['metrics-reader'] as string[] | undefined) ?? [];
  for (const reader of metricsReaders) {
    const [readerNamespace, readerName, ...rest] = reader.split('/');
    if (rest.length || !readerNamespace || !readerName || !DNS_LABEL.test(readerNamespace))
      throw new UsageError(
        `--metrics-reader ${reader}: name a ServiceAccount as <namespace>/<name>, e.g. monitoring/prometheus-k8s`,
      );
  }
  const grafana = grafanaArguments(values, values.out as string | undefined, cwd);
  if (typeof grafana === 'string') throw new UsageError(grafana);
  if (values.helm && grafana.grafana && resolve(cwd, grafana.grafana.dir) === resolve(cwd, values.helm as string))
    throw new UsageError(
      `--grafana ${grafana.grafana.dir} is the --helm folder: give the dashboards a folder of their own`,
    );
  const check = checkRequest(values, resolve(cwd, modulePath));
  return {
    module: modulePath,
    ...(values.export ? { export: values.export as string } : {}),
    ...(values.out ? { out: values.out as string } : {}),
    name,
    namespace,
    ...(values['create-namespace'] ? { createNamespace: true } : {}),
    image: (values.image as string | undefined) ?? `${name}:latest`,
    ...(webhookCertificates ? { webhookCertificates } : {}),
    ...(metricsPort !== undefined ? { metricsPort } : {}),
    ...(healthPort !== undefined ? { healthPort } : {}),
    ...(watchNamespace !== undefined ? { watchNamespace } : {}),
    ...(values['service-monitor'] ? { serviceMonitor: true } : {}),
    ...(metricsReaders.length ? { metricsReaders } : {}),
    ...(metricsCertificates ? { metricsCertificates } : {}),
    ...(values['no-network-policy'] ? { noNetworkPolicy: true } : {}),
    ...(values.helm ? { helm: values.helm as string } : {}),
    ...grafana,
    ...(check ? { check } : {}),
    ...(olm ? { olm } : {}),
  };
}

/** `--olm`, `--olm-config`: refused beside another output or what OLM does itself. */
function olmRequest(
  values: Record<string, string | boolean | string[] | undefined>,
  module: string,
  cwd: string,
): OlmRequest | undefined {
  const dir = values.olm as string | undefined;
  if (!dir) {
    if (values['olm-config'] !== undefined) throw new UsageError('--olm-config goes with --olm <dir>');
    return undefined;
  }
  if (values.out || values.helm)
    throw new UsageError('--olm and --out or --helm: choose one, an OLM bundle, kustomize folders or a chart');
  if (values['create-namespace'])
    throw new UsageError('--create-namespace: OLM installs into the namespace its OperatorGroup is in; leave it out');
  if (values.grafana)
    throw new UsageError('--grafana with --olm: a bundle carries no dashboards; write them with a run of their own');
  if (values['webhook-certificates'])
    throw new UsageError(
      '--webhook-certificates: OLM makes and mounts the webhook certificate; leave it out with --olm',
    );
  const near = olmConfigNear(projectNear(module));
  const config = values['olm-config'] ? resolve(cwd, values['olm-config'] as string) : near.file;
  if (!config)
    throw new UsageError(
      `--olm: no package.json near the module to find ${OLM_CONFIG_FILE} beside; give --olm-config <file>`,
    );
  return { dir, config, ...(near.version ? { version: near.version } : {}) };
}

/** `--check`, `--allow`, `--stored-versions`; the allowances default to the project's file, if it has one. */
function checkRequest(
  values: Record<string, string | boolean | string[] | undefined>,
  module: string,
): CompatibilityRequest | undefined {
  const previous = values.check as string[] | undefined;
  if (!previous) {
    for (const flag of ['allow', 'stored-versions']) {
      if (values[flag] !== undefined) throw new UsageError(`--${flag} goes with --check <previous CRDs>`);
    }
    return undefined;
  }
  const project = projectNear(module);
  const allow =
    (values.allow as string | undefined) ??
    (project && existsSync(join(project, ALLOWANCES_FILE)) ? join(project, ALLOWANCES_FILE) : undefined);
  const storedVersions = storedVersionsOf(values['stored-versions'] as string[] | undefined);
  return { previous, ...(allow ? { allow } : {}), ...(storedVersions ? { storedVersions } : {}) };
}

/** The folder of the nearest package.json above the file: the project. */
function projectNear(file: string): string | undefined {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

/** The unscoped name in the nearest package.json above the file, made a valid Kubernetes name. */
function packageNameNear(file: string): string | undefined {
  const dir = projectNear(file);
  if (!dir) return undefined;
  const { name } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string };
  const cleaned = name
    ?.replace(/^@[^/]+\//, '')
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63);
  return cleaned || undefined;
}
