// `nestor manifests --helm <dir>`: the chart, written as the kustomize folders are (all files
// or none), from the same objects.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { CHART_IMAGE, CHART_NAMESPACE, helmChart } from './helm-chart.js';
import { writeManifestFiles } from './manifest-output.js';
import { generateManifests, UsageError, type ManifestsArguments } from './manifests-command.js';

/** The folders of a chart that hold generated files: what is no longer generated there goes. */
export const CHART_FOLDERS = ['templates'] as const;

/** Writes the chart to args.helm; returns what to print on stderr. */
export async function writeHelmChart(args: ManifestsArguments & { helm: string }, cwd: string): Promise<string> {
  if (args.out) throw new UsageError('--helm and --out: choose one, a chart or kustomize folders');
  if (args.createNamespace)
    throw new UsageError(
      '--create-namespace: a chart installs into the release namespace; helm install --create-namespace makes it',
    );
  // Made for placeholders, which the chart turns into the release's namespace and the image
  // value; the ServiceMonitor and NetworkPolicies always, behind values.
  const chartArgs: ManifestsArguments = {
    ...args,
    namespace: CHART_NAMESPACE,
    image: CHART_IMAGE,
    serviceMonitor: true,
    noNetworkPolicy: false,
  };
  let generated;
  try {
    generated = await generateManifests(chartArgs, cwd);
  } catch (error) {
    // A ServiceMonitor needs metrics: an operator that serves none gets no ServiceMonitor.
    if (args.serviceMonitor || !/serves no metrics/.test((error as Error).message)) throw error;
    generated = await generateManifests({ ...chartArgs, serviceMonitor: false }, cwd);
  }
  const { controllers, manifests, moduleName, notes } = generated;
  const files = helmChart(manifests, {
    name: args.name,
    version: chartVersion(resolve(cwd, args.module)),
    image: args.image,
    serviceMonitor: args.serviceMonitor ?? false,
    networkPolicy: !args.noNetworkPolicy,
    namespace: args.namespace,
  });
  const out = resolve(cwd, args.helm);
  const removed = await writeManifestFiles(out, files, { folders: CHART_FOLDERS, formerLayout: [] });
  const templates = Object.keys(files)
    .filter((path) => path.startsWith('templates/') && path.endsWith('.yaml'))
    .map((path) => path.slice('templates/'.length));
  const lines = [
    `${controllers.length} controller(s) in ${moduleName} (${controllers.map((c) => c.className).join(', ')}): ` +
      `${manifests.crds.length} CRD(s), ${manifests.rbac.length} RBAC object(s), a Deployment` +
      (manifests.metrics ? ', the metrics Service' : '') +
      (manifests.webhooks ? `, ${manifests.webhooks.length} webhook object(s)` : ''),
    ...notes.map((note) => `note: ${note}`),
    `wrote the chart ${args.name} to ${args.helm}: Chart.yaml, values.yaml, templates/ (${templates.join(', ')})`,
    ...(removed.length ? [`removed what an earlier nestor manifests wrote there: ${removed.join(', ')}`] : []),
    `install: helm install ${args.name} ${args.helm} --namespace ${args.namespace} --create-namespace`,
    `uninstall: helm uninstall ${args.name} --namespace ${args.namespace}` +
      ' (the CRDs and custom resources stay: crd.keep in values.yaml)',
  ];
  return lines.map((line) => `${line}\n`).join('');
}

/** The version in the package.json nearest the module when it is SemVer, else 0.1.0. */
function chartVersion(file: string): string {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const path = join(dir, 'package.json');
    if (existsSync(path)) {
      const { version } = JSON.parse(readFileSync(path, 'utf8')) as { version?: string };
      return version && /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/.test(version) ? version : '0.1.0';
    }
    if (dirname(dir) === dir) return '0.1.0';
  }
}
