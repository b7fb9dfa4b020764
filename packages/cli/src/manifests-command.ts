import { join, resolve } from 'node:path';
import { manifestFiles, MANIFEST_FOLDERS, yamlDocuments, type OperatorManifests } from '@nestor/operator/manifests';
import { UsageError, type CommandIo } from './command-io.js';
import { isInputError } from './compat/compatibility-check.js';
import { generatedCrdsPass } from './compat/manifests-check.js';
import { generateManifests } from './generate-manifests.js';
import { writeGrafanaDashboards } from './grafana-output.js';
import { writeHelmChart } from './helm/write-helm-chart.js';
import { MANIFESTS_USAGE, parseManifestsArguments, type ManifestsArguments } from './manifests-arguments.js';
import { writeManifestFiles } from './manifest-output.js';
import { OlmConfigError } from './olm/olm-config.js';
import { writeOlmBundle } from './olm-output.js';

/** `nestor manifests`: returns the exit code. */
export async function manifestsCommand(argv: string[], io: CommandIo): Promise<number> {
  let args: ManifestsArguments | 'help';
  try {
    args = parseManifestsArguments(argv, io.cwd);
    if (args === 'help') {
      io.stdout(`${MANIFESTS_USAGE}\n`);
      return 0;
    }
    if (args.olm) return await writeOlmBundle({ ...args, olm: args.olm }, io);
    if (args.helm) {
      const given = args;
      if (given.check && !generatedCrdsPass((await generateManifests(given, io.cwd)).manifests.crds, given.check, io))
        return 1;
      const request = {
        ...given,
        helm: args.helm,
        serviceMonitor: given.serviceMonitor ?? false,
        networkPolicy: !given.noNetworkPolicy,
      };
      // As with --out: dashboards that cannot be written stop the chart too.
      const grafana = given.grafana ? await writeGrafanaDashboards(given.grafana, given, io.cwd) : '';
      const chart = await writeHelmChart(request, io.cwd, (overrides) =>
        generateManifests({ ...given, ...overrides }, io.cwd),
      );
      io.stderr(`${chart}${grafana}`);
      return 0;
    }
    const { controllers, manifests, moduleName, notes } = await generateManifests(args, io.cwd);
    if (args.check && !generatedCrdsPass(manifests.crds, args.check, io)) return 1;
    const summary =
      `${controllers.length} controller(s) in ${moduleName} (${controllers.map((c) => c.className).join(', ')}): ` +
      `${manifests.crds.length} CRD(s), ${manifests.namespace ? 'a Namespace, ' : ''}` +
      `${manifests.rbac.length} RBAC object(s) (${rbacScope(manifests)}), a Deployment` +
      (manifests.metrics ? `, ${manifests.metrics.map((m) => m.kind).join(' and ')} for /metrics` : '') +
      (manifests.webhooks ? `, ${manifests.webhooks.length} webhook object(s)` : '') +
      (manifests.networkPolicies ? `, ${manifests.networkPolicies.length} NetworkPolicy(ies)` : '') +
      notes.map((note) => `\nnote: ${note}`).join('');
    // First: dashboards that cannot be written stop the manifests too.
    const grafana = args.grafana ? await writeGrafanaDashboards(args.grafana, args, io.cwd) : '';
    if (!args.out) {
      const namespace = manifests.namespace ? [manifests.namespace] : [];
      io.stdout(
        yamlDocuments([
          ...manifests.crds,
          ...namespace,
          ...manifests.rbac,
          ...manifests.deployment,
          ...(manifests.metrics ?? []),
          ...(manifests.webhooks ?? []),
          ...(manifests.networkPolicies ?? []),
        ]),
      );
      io.stderr(`${summary}\n${grafana}`);
      return 0;
    }
    const files = manifestFiles(manifests);
    const removed = await writeManifestFiles(resolve(io.cwd, args.out), files);
    io.stderr(`${summary}\n${whatWasWritten(args.out, args, files, removed)}${grafana}`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`nestor manifests: ${error.message}\n\n${MANIFESTS_USAGE}\n`);
      return 2;
    }
    if (error instanceof OlmConfigError) {
      io.stderr(`nestor manifests --olm: ${error.message}\n`);
      return 1;
    }
    if (isInputError(error)) {
      io.stderr(`nestor manifests --check: ${error.message}\n`);
      return 1;
    }
    io.stderr(`nestor manifests: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

/** Where the controllers' rights are granted: a Role in each namespace they watch, or cluster-wide. */
function rbacScope(manifests: OperatorManifests): string {
  const name = manifests.deployment[0]?.metadata.name;
  const roles = manifests.rbac.filter((m) => m.kind === 'Role' && m.metadata.name === name);
  if (roles.length === 0) return "the controllers' ClusterRole";
  const where = roles.map((role) => role.metadata.namespace).join(', ');
  return roles.length === 1 ? `the controllers' Role in ${where}` : `the controllers' Roles in ${where}`;
}

/** The folders written, and the commands to install and uninstall, in order. */
function whatWasWritten(
  out: string,
  args: ManifestsArguments,
  files: Record<string, string>,
  removed: string[],
): string {
  const written = MANIFEST_FOLDERS.filter((folder) => `${folder}/kustomization.yaml` in files);
  // members/ goes to each member cluster of a fleet, not to the operator's.
  const folders = written.filter((folder) => folder !== 'members');
  const lines = [`wrote ${[...written.map((folder) => `${folder}/`), 'README.md'].join(', ')} to ${out}`];
  if (removed.length) lines.push(`removed what an earlier nestor manifests wrote there: ${removed.join(', ')}`);
  if (!args.createNamespace) {
    lines.push(`the namespace ${args.namespace} must exist: kubectl create namespace ${args.namespace}`);
  }
  lines.push(
    `install, in order: ${folders.map((folder) => `kubectl apply -k ${join(out, folder)}`).join(' && ')}`,
    `uninstall the operator: kubectl delete -k ${join(out, 'operator')}` +
      ` (the CRDs and the namespace stay: see ${join(out, 'README.md')})`,
  );
  if (written.includes('members')) {
    lines.push(`in each member cluster of the fleet: kubectl --context <member> apply -k ${join(out, 'members')}`);
  }
  return lines.map((line) => `${line}\n`).join('');
}
