import { installGuide } from './install-guide.js';
import { manifestFolders } from './manifest-folders.js';
import type { OperatorManifests } from './operator-manifests.js';
import { GENERATED_HEADER, stringifyYaml, yamlDocuments } from './yaml-documents.js';

/**
 * The manifests as files, by path: one folder per kustomization (crds/, namespace/ when
 * asked for, operator/), each with its kustomization.yaml (`kubectl apply -k <folder>`),
 * and a README.md that gives the order to apply them and how to uninstall. A file with
 * nothing in it is left out, and so is a folder.
 */
export function manifestFiles(manifests: OperatorManifests): Record<string, string> {
  const files: Record<string, string> = {};
  const folders = manifestFolders(manifests);
  for (const { folder, about, objects } of folders) {
    const resources = Object.keys(objects).filter((file) => objects[file]!.length);
    for (const file of resources) files[`${folder}/${file}`] = yamlDocuments(objects[file]!);
    files[`${folder}/kustomization.yaml`] =
      GENERATED_HEADER +
      about.map((line) => `# ${line}\n`).join('') +
      stringifyYaml({ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources });
  }
  files['README.md'] = installGuide(manifests, folders);
  return files;
}
