import { manifestsCommand, type CommandIo } from './manifests-command.js';

export const USAGE = `Usage: nestor <command> [options]

Commands:
  manifests   write CRDs, RBAC and a Deployment for an operator, from its decorators

Run nestor <command> --help for a command's options.`;

/** Dispatches a command line; returns the exit code. */
export async function run(argv: string[], io: CommandIo): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'manifests':
      return manifestsCommand(rest, io);
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
