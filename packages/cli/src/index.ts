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
