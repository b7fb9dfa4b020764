// @nestor/cli as a library: the commands, for scripts and tests.
export { run, USAGE } from './cli.js';
export {
  manifestsCommand,
  generateManifests,
  loadModuleClass,
  parseManifestsArguments,
  UsageError,
  MANIFESTS_USAGE,
  type CommandIo,
  type ManifestsArguments,
} from './manifests-command.js';
export type { GrafanaArguments } from './grafana-output.js';
export { CHART_IMAGE, CHART_NAMESPACE, helmChart, imageParts, type HelmChartOptions } from './helm/helm-chart.js';
export { writeHelmChart, type GenerateManifests, type HelmChartRequest } from './helm/write-helm-chart.js';
export { importCrdCommand, IMPORT_CRD_USAGE, type ImportIo } from './import/import-crd-command.js';
export { crdVersionSource, CrdSchemaError, GENERATED_MARK } from './import/crd-typescript.js';
export {
  crdOf,
  crdsOfText,
  CrdSourceError,
  type CrdDefinition,
  type CrdRead,
  type CrdVersion,
} from './import/crd-documents.js';
