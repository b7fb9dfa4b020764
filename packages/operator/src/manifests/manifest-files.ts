import { stringify } from 'yaml';
import type { OperatorManifests } from './operator-manifests.js';
import { GENERATED_HEADER, yamlDocuments } from './yaml-documents.js';

/**
 * The manifests as YAML files, by file name: crds.yaml, rbac.yaml, deployment.yaml, and a
 * kustomization.yaml listing them (`kubectl apply -k <dir>`); each file also goes alone
 * to `kubectl apply -f`. A file with nothing in it (no CRDs) is left out.
 */
export function manifestFiles(manifests: OperatorManifests): Record<string, string> {
  const files: Record<string, string> = {};
  const parts: Array<[string, readonly object[]]> = [
    ['crds.yaml', manifests.crds],
    ['rbac.yaml', manifests.rbac],
    ['deployment.yaml', manifests.deployment],
  ];
  for (const [file, objects] of parts) if (objects.length) files[file] = yamlDocuments(objects);
  files['kustomization.yaml'] =
    GENERATED_HEADER +
    stringify({ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: Object.keys(files) });
  return files;
}
