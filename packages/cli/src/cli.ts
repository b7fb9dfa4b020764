import { crdDiffCommand } from './compat/crd-diff-command.js';
import { importCrdCommand } from './import/import-crd-command.js';
import type { CommandIo } from './command-io.js';
import { manifestsCommand } from './manifests-command.js';
import { migrateStorageCommand } from './migrate-storage-command.js';
import { createApiCommand } from './scaffold/create-api-command.js';
import { initCommand } from './scaffold/init-command.js';

export const USAGE = `Usage: nestor <command> [options]

Commands:
  init         make a Nest application an operator project (OperatorModule, packages,
               the e2e runner's control plane, a Dockerfile)
  create api   add a custom resource kind: its class, controller, module and e2e test
  manifests    write CRDs, RBAC and a Deployment for an operator, from its decorators
  import crd   write TypeScript types and descriptors for kinds other projects' CRDs define
  crd diff     report the changes between two releases of CRDs that break stored objects
  migrate-storage
               rewrite a CRD's objects in its storage version and trim storedVersions
               (what the operator's leader does by itself), e.g. as a Job

Run nestor <command> --help for a command's options.`;

/** Dispatches a command line; returns the exit code. */
export async function run(argv: string[], io: CommandIo): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'manifests':
      return manifestsCommand(rest, io);
    case 'init':
      return initCommand(rest, io);
    case 'migrate-storage':
      return migrateStorageCommand(rest, io);
    case 'create':
      if (rest[0] === 'api') return createApiCommand(rest.slice(1), io);
      io.stderr(`nestor: unknown command "create ${rest[0] ?? ''}": the one there is, is "create api"\n`);
      return 2;
    case 'import':
      if (rest[0] === 'crd') return importCrdCommand(rest.slice(1), io);
      io.stderr(`nestor: unknown command "import ${rest[0] ?? ''}": the one there is, is "import crd"\n`);
      return 2;
    case 'crd':
      if (rest[0] === 'diff') return crdDiffCommand(rest.slice(1), io);
      io.stderr(`nestor: unknown command "crd ${rest[0] ?? ''}": the one there is, is "crd diff"\n`);
      return 2;
    case undefined:
    case '-h':
    case '--help':
    case 'help':
      io.stdout(`${USAGE}\n`);
      return command === undefined ? 2 : 0;
    default:
      io.stderr(`nestor: unknown command "${command}"\n\n${USAGE}\n`);
      return 2;
  }
}
