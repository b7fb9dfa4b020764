// @nestor/cli as a library: the commands, for scripts and tests.
export { run, USAGE } from './cli.js';
export { manifestsCommand } from './manifests-command.js';
export { generateManifests } from './generate-manifests.js';
export { loadModuleClass } from './root-module.js';
export { parseManifestsArguments, MANIFESTS_USAGE, type ManifestsArguments } from './manifests-arguments.js';
export type { CompatibilityRequest } from './compat/compatibility-check.js';
export { UsageError, type CommandIo } from './command-io.js';
export type { GrafanaArguments } from './grafana-output.js';
export { readOlmConfig, OlmConfigError, OLM_CONFIG_FILE, type OlmRequest } from './olm/olm-config.js';
export { CHART_IMAGE, CHART_NAMESPACE } from './helm/chart-placeholders.js';
export { helmChart, type HelmChartOptions } from './helm/helm-chart.js';
export { imageParts } from './helm/chart-values.js';
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
