// `nestor manifests --grafana <dir>`: the Grafana dashboards of the runtime's metrics, and
// with --grafana-configmap the ConfigMap Grafana's sidecar provisions them from.
import { resolve } from 'node:path';
import {
  GENERATED_NOTICE,
  GRAFANA_SIDECAR_LABEL,
  grafanaDashboards,
  grafanaDashboardsConfigMap,
  yamlDocuments,
} from '@nestor/operator/manifests';
import { writeManifestFiles } from './manifest-output.js';

export const GRAFANA_USAGE = `  --grafana <dir>      also write Grafana dashboards of the operator's metrics there
                       (<name>-controllers.json, <name>-runtime.json), all files or none
  --grafana-configmap  with --grafana, also a ConfigMap of them for Grafana's dashboard
                       sidecar (label ${GRAFANA_SIDECAR_LABEL}: "1"), in the operator's namespace,
                       with a kustomization: kubectl apply -k <dir>`;

/** The options of parseArgs for the flags. */
export const GRAFANA_OPTIONS = {
  grafana: { type: 'string' },
  'grafana-configmap': { type: 'boolean' },
} as const;

export interface GrafanaArguments {
  dir: string;
  configMap: boolean;
}

/** The flags' values, checked; a string is the mistake to report as a usage error. */
export function grafanaArguments(
  values: Record<string, unknown>,
  out: string | undefined,
  cwd: string,
): { grafana?: GrafanaArguments } | string {
  const dir = values['grafana'] as string | undefined;
  const configMap = values['grafana-configmap'] === true;
  if (dir === undefined) {
    return configMap ? '--grafana-configmap needs --grafana <dir>: the folder to write the ConfigMap to' : {};
  }
  if (!dir) return '--grafana needs a folder, e.g. --grafana deploy/grafana';
  if (out !== undefined && resolve(cwd, dir) === resolve(cwd, out)) {
    return `--grafana ${dir} is the --out folder: give the dashboards a folder of their own, e.g. --grafana ${out}/grafana`;
  }
  return { grafana: { dir, configMap } };
}

/** Writes the dashboards (and the ConfigMap) under the folder, all or none; returns what to tell. */
export async function writeGrafanaDashboards(
  args: GrafanaArguments,
  operator: { name: string; namespace: string },
  cwd: string,
): Promise<string> {
  const dashboards = grafanaDashboards(operator.name);
  const files: Record<string, string> = {};
  for (const [file, dashboard] of Object.entries(dashboards)) files[file] = `${JSON.stringify(dashboard, null, 2)}\n`;
  if (args.configMap) {
    files['configmap.yaml'] = yamlDocuments([
      grafanaDashboardsConfigMap(operator.name, operator.namespace, dashboards),
    ]);
    files['kustomization.yaml'] =
      `# ${GENERATED_NOTICE}\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - configmap.yaml\n`;
  }
  await writeManifestFiles(resolve(cwd, args.dir), files);
  const written = Object.keys(files).join(', ');
  return (
    `wrote ${written} to ${args.dir}\n` +
    (args.configMap
      ? `provision them: kubectl apply --server-side -k ${args.dir} (Grafana's sidecar must watch ${operator.namespace})\n`
      : `import them in Grafana (Dashboards > New > Import), or provision them with --grafana-configmap\n`)
  );
}
