// `nestor manifests --helm <dir>`: the chart, written as the kustomize folders are (all files
// or none), from the same objects.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { OperatorManifests } from '@nestor/operator/manifests';
import { CHART_IMAGE, CHART_NAMESPACE } from './chart-placeholders.js';
import { helmChart } from './helm-chart.js';
import { writeManifestFiles } from '../manifest-output.js';

/** The folders of a chart that hold generated files: what is no longer generated there goes. */
export const CHART_FOLDERS = ['templates'] as const;

/** What the command line asks of the chart. */
export interface HelmChartRequest {
  /** The chart's folder (`--helm`). */
  helm: string;
  /** The compiled module, whose package.json gives the chart's version. */
  module: string;
  name: string;
  /** The namespace the install command printed names. */
  namespace: string;
  image: string;
  serviceMonitor: boolean;
  networkPolicy: boolean;
}

/** What `nestor manifests` makes of the module, for the objects' namespace, image and optional parts given. */
export type GenerateManifests = (overrides: {
  namespace: string;
  image: string;
  serviceMonitor: boolean;
  noNetworkPolicy: boolean;
}) => Promise<{
  controllers: { className: string }[];
  manifests: OperatorManifests;
  moduleName: string;
  notes: string[];
}>;

/** Writes the chart to request.helm; returns what to print on stderr. */
export async function writeHelmChart(
  request: HelmChartRequest,
  cwd: string,
  generate: GenerateManifests,
): Promise<string> {
  // Made for placeholders, which the chart turns into the release's namespace and the image
  // value; the ServiceMonitor and NetworkPolicies always, behind values.
  const overrides = { namespace: CHART_NAMESPACE, image: CHART_IMAGE, serviceMonitor: true, noNetworkPolicy: false };
  let generated;
  try {
    generated = await generate(overrides);
  } catch (error) {
    // A ServiceMonitor needs metrics: an operator that serves none gets no ServiceMonitor.
    if (request.serviceMonitor || !/serves no metrics/.test((error as Error).message)) throw error;
    generated = await generate({ ...overrides, serviceMonitor: false });
  }
  const { controllers, manifests, moduleName, notes } = generated;
  const files = helmChart(manifests, {
    name: request.name,
    version: chartVersion(resolve(cwd, request.module)),
    image: request.image,
    serviceMonitor: request.serviceMonitor,
    networkPolicy: request.networkPolicy,
  });
  const removed = await writeManifestFiles(resolve(cwd, request.helm), files, {
    folders: CHART_FOLDERS,
    formerLayout: [],
  });
  const templates = Object.keys(files)
    .filter((path) => path.startsWith('templates/') && path.endsWith('.yaml'))
    .map((path) => path.slice('templates/'.length));
  const { name, helm, namespace } = request;
  const lines = [
    `${controllers.length} controller(s) in ${moduleName} (${controllers.map((c) => c.className).join(', ')}): ` +
      `${manifests.crds.length} CRD(s), ${manifests.rbac.length} RBAC object(s), a Deployment` +
      (manifests.metrics ? ', the metrics Service' : '') +
      (manifests.webhooks ? `, ${manifests.webhooks.length} webhook object(s)` : ''),
    ...notes.map((note) => `note: ${note}`),
    `wrote the chart ${name} to ${helm}: Chart.yaml, values.yaml, values.schema.json, templates/ (${templates.join(', ')})`,
    ...(removed.length ? [`removed what an earlier nestor manifests wrote there: ${removed.join(', ')}`] : []),
    `install: helm install ${name} ${helm} --namespace ${namespace} --create-namespace`,
    `uninstall: helm uninstall ${name} --namespace ${namespace}` +
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
