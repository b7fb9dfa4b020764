// An OLM bundle (registry+v1) as files: manifests/ (the CSV, the CRDs, the other objects,
// one object a file, as OLM's bundle loader reads them), metadata/annotations.yaml (the
// package and its channels) and bundle.Dockerfile (the same as its image's labels).
import type { GeneratedCustomResourceDefinition } from '../../crd/crd-generator.js';
import type { Manifest } from '../manifest.js';
import type { OperatorManifests } from '../operator-manifests.js';
import { GENERATED_HEADER, stringifyYaml } from '../yaml-documents.js';
import {
  clusterServiceVersion,
  type ClusterServiceVersionOptions,
  type OlmBundleMetadata,
} from './cluster-service-version.js';

/** The bundle's annotations: metadata/annotations.yaml, and the labels of its image. */
export function bundleAnnotations(metadata: OlmBundleMetadata): Record<string, string> {
  return {
    'operators.operatorframework.io.bundle.mediatype.v1': 'registry+v1',
    'operators.operatorframework.io.bundle.manifests.v1': 'manifests/',
    'operators.operatorframework.io.bundle.metadata.v1': 'metadata/',
    'operators.operatorframework.io.bundle.package.v1': metadata.packageName,
    'operators.operatorframework.io.bundle.channels.v1': metadata.channels.join(','),
    'operators.operatorframework.io.bundle.channel.default.v1': metadata.defaultChannel ?? metadata.channels[0]!,
  };
}

/**
 * The bundle's files, by path under its folder. `manifests` is what `nestor manifests`
 * generates with the webhook certificates `'olm'`; what OLM makes itself (the
 * ServiceAccount, the rights bound to it, the Deployment, the webhook Service and
 * configurations, their certificate, the CRDs' conversion) is said in the CSV instead.
 */
export function olmBundleFiles(
  manifests: OperatorManifests,
  metadata: OlmBundleMetadata,
  options: ClusterServiceVersionOptions,
): Record<string, string> {
  const { csv, objects } = clusterServiceVersion(manifests, metadata, options);
  // Copied through JSON: objects shared in memory (the Deployment's labels) are written out
  // each time, not as YAML anchors and aliases.
  const file = (object: object) =>
    GENERATED_HEADER + stringifyYaml(JSON.parse(JSON.stringify(object)), { lineWidth: 0 });
  const files: Record<string, string> = {
    [`manifests/${metadata.packageName}.clusterserviceversion.yaml`]: file(csv),
  };
  for (const crd of manifests.crds)
    files[`manifests/${crd.spec.group}_${crd.spec.names.plural}.yaml`] = file(withoutConversion(crd));
  for (const object of objects) files[`manifests/${objectFileName(object)}`] = file(withoutNamespace(object));
  const annotations = bundleAnnotations(metadata);
  files['metadata/annotations.yaml'] = file({ annotations });
  files['bundle.Dockerfile'] =
    GENERATED_HEADER +
    '# Build the bundle image from this folder: docker build -f bundle.Dockerfile -t <registry>/<bundle>:<version> .\n' +
    'FROM scratch\n\n' +
    Object.entries(annotations)
      .map(([key, value]) => `LABEL ${key}=${value}\n`)
      .join('') +
    '\nCOPY manifests /manifests/\nCOPY metadata /metadata/\n';
  return files;
}

/** operator-sdk's file names: `<name>_<group>_<version>_<kind>.yaml`, the core group as `v1` alone. */
function objectFileName(object: Manifest): string {
  return `${object.metadata.name}_${object.apiVersion.replace('/', '_')}_${object.kind.toLowerCase()}.yaml`;
}

/** OLM sets a converted CRD's `spec.conversion` itself, to the Service it makes (webhookdefinitions). */
function withoutConversion(crd: GeneratedCustomResourceDefinition): GeneratedCustomResourceDefinition {
  const { conversion: _conversion, ...spec } = crd.spec;
  return { ...crd, spec };
}

/** OLM creates a bundle's namespaced objects in the namespace it installs the operator in. */
function withoutNamespace(object: Manifest): Manifest {
  const { namespace: _namespace, ...metadata } = object.metadata;
  return { ...object, metadata };
}
