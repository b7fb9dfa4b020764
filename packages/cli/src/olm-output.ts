import { join, resolve } from 'node:path';
import { olmBundleFiles } from '@nestor/operator/manifests';
import { generatedCrdsPass } from './compat/manifests-check.js';
import type { CommandIo } from './command-io.js';
import { generateManifests } from './generate-manifests.js';
import type { ManifestsArguments } from './manifests-arguments.js';
import { writeManifestFiles } from './manifest-output.js';
import { readOlmConfig, type OlmRequest } from './olm/olm-config.js';

/** Where the bundle's generated files live: a generated file there not written again is removed. */
const BUNDLE_LAYOUT = { folders: ['manifests', 'metadata'], formerLayout: [] };

/**
 * `nestor manifests --olm <dir>`: the same objects as --out, made an OLM bundle, all files or
 * none. Returns the exit code (1: --check found a breaking change, nothing written).
 */
export async function writeOlmBundle(args: ManifestsArguments & { olm: OlmRequest }, io: CommandIo): Promise<number> {
  // OLM makes the webhook certificate; the module must read it where OLM mounts it.
  const { controllers, manifests, moduleName, notes } = await generateManifests(
    { ...args, webhookCertificates: 'olm' },
    io.cwd,
  );
  if (args.check && !generatedCrdsPass(manifests.crds, args.check, io)) return 1;
  const controllerRoles = manifests.rbac.filter((m) => m.kind === 'Role' && m.metadata.name === args.name);
  if (controllerRoles.length && !args.watchNamespace)
    throw new Error(
      `the controllers watch ${controllerRoles.map((role) => role.metadata.namespace).join(', ')} (the module's or a ` +
        "@Controller's namespace), but under OLM the OperatorGroup picks the namespaces an operator watches: leave the " +
        'namespace out of the module, and give --watch-namespace <ns> for an operator of one namespace (OwnNamespace, ' +
        'SingleNamespace) or nothing for every namespace (AllNamespaces)',
    );
  if (manifests.members?.length)
    notes.push("members/ (the fleet members' RBAC) is not part of a bundle: apply it with --out");
  const metadata = readOlmConfig(args.olm.config, {
    packageName: args.name,
    ...(args.olm.version ? { version: args.olm.version } : {}),
    kinds: [...new Set(manifests.crds.map((crd) => crd.spec.names.kind))].sort(),
  });
  const files = olmBundleFiles(manifests, metadata, {
    name: args.name,
    namespace: args.namespace,
    image: args.image,
    ...(args.watchNamespace ? { watchNamespace: args.watchNamespace } : {}),
  });
  const removed = await writeManifestFiles(resolve(io.cwd, args.olm.dir), files, BUNDLE_LAYOUT);
  const csv = `${metadata.packageName}.v${metadata.version}`;
  io.stderr(
    `${controllers.length} controller(s) in ${moduleName}: an OLM bundle of ${csv} (${manifests.crds.length} CRD(s), ` +
      `${Object.keys(files).filter((file) => file.startsWith('manifests/')).length} manifest(s)), channels ` +
      `${metadata.channels.join(', ')}\n` +
      notes.map((note) => `note: ${note}\n`).join('') +
      (removed.length ? `removed what an earlier nestor manifests --olm wrote there: ${removed.join(', ')}\n` : '') +
      `wrote manifests/, metadata/annotations.yaml and bundle.Dockerfile to ${args.olm.dir}\n` +
      `build its image: docker build -f ${join(args.olm.dir, 'bundle.Dockerfile')} -t <registry>/${metadata.packageName}-bundle:v${metadata.version} ${args.olm.dir}\n`,
  );
  return 0;
}
