// `nestor migrate-storage`: the storage-version migration the operator's leader runs by
// itself (docs/upgrades.md), as a command, for a Job or a release pipeline: each CRD named
// gets every object rewritten in its storage version, then its storedVersions trimmed.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ClusterConfig, Transport } from '@nestor/operator';
import { loadKubeConfig, type KubeConfigSource, type RuntimeLogger } from '@nestor/operator/runtime';
import { describeCounts, migrateStorageVersion, type MigrationResult } from '@nestor/operator/upgrades';
import { UsageError, type CommandIo } from './command-io.js';

export const MIGRATE_STORAGE_USAGE = `Usage: nestor migrate-storage --kind <plural.group> [--kind ...] [options]

Migrates the objects of each CRD named to its storage version: when the CRD's
status.storedVersions lists another version too, every object, in every namespace, is
written back unchanged (the API server stores it in the storage version), then
storedVersions is set to the storage version alone, so that the old versions may be
removed from the CRD. Objects stored in the storage version already cost no write, so a
run cut short is simply run again. What the operator's leader does by itself, unless its
migrateStorageVersions option is false: run this as a Job instead (docs/upgrades.md).

Options:
  --kind <name>             the CRD, <plural>.<group> (e.g. widgets.example.com); repeatable
  --kubeconfig <path>       the kubeconfig file (default: KUBECONFIG, the in-cluster service
                            account, ~/.kube/config)
  --context <name>          its context (default: its current context)
  --writes-per-second <n>   objects written per second at most (default 100)
  --concurrency <n>         writes in flight at once (default 8)
  --page-size <n>           objects per LIST page (default 500)
  -h, --help                show this help

Exit code: 0 when every CRD is migrated (or had nothing to migrate), 1 when one is not
(objects that could not be rewritten, the CRD changed meanwhile, or a failure), 2 for a
wrong call. The rights it needs: get on the CRDs, patch on their status, list and patch on
their kinds in every namespace.`;

const CRD_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;

interface MigrateArguments {
  kinds: string[];
  kubeconfig?: string;
  context?: string;
  writesPerSecond?: number;
  concurrency?: number;
  pageSize?: number;
}

export async function migrateStorageCommand(argv: string[], io: CommandIo): Promise<number> {
  let args: MigrateArguments | 'help';
  try {
    args = migrateArguments(argv);
  } catch (error) {
    if (!(error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'))) throw error;
    io.stderr(`nestor migrate-storage: ${(error as Error).message}\n\n${MIGRATE_STORAGE_USAGE}\n`);
    return 2;
  }
  if (args === 'help') {
    io.stdout(`${MIGRATE_STORAGE_USAGE}\n`);
    return 0;
  }
  let transport: Transport;
  try {
    transport = await Transport.fromKubeConfig(kubeConfigOf(args, io.cwd), { requestTimeoutMs: 60_000 });
  } catch (error) {
    io.stderr(`nestor migrate-storage: ${(error as Error).message}\n`);
    return 1;
  }
  const logger: RuntimeLogger = {
    debug: () => {},
    info: (message) => io.stderr(`${message}\n`),
    warn: (message) => io.stderr(`${message}\n`),
    error: (message) => io.stderr(`${message}\n`),
  };
  let failed = false;
  try {
    for (const kind of args.kinds) {
      try {
        const result = await migrateStorageVersion(transport, kind, {
          logger,
          ...(args.writesPerSecond !== undefined ? { writesPerSecond: args.writesPerSecond } : {}),
          ...(args.concurrency !== undefined ? { concurrency: args.concurrency } : {}),
          ...(args.pageSize !== undefined ? { pageSize: args.pageSize } : {}),
        });
        io.stdout(`${summary(result)}\n`);
        failed ||= result.outcome !== 'migrated' && result.outcome !== 'current';
      } catch (error) {
        io.stderr(`nestor migrate-storage: ${kind}: ${(error as Error).message}\n`);
        failed = true;
      }
    }
  } finally {
    transport.close();
  }
  return failed ? 1 : 0;
}

/** One line per CRD, for the Job's log. */
function summary(result: MigrationResult): string {
  const stored = `storedVersions [${result.storedVersions.join(', ')}]`;
  switch (result.outcome) {
    case 'current':
      return `${result.crd}: nothing to migrate, ${stored}`;
    case 'migrated':
      return `${result.crd}: migrated to ${result.storage}: ${describeCounts(result)} in ${result.seconds.toFixed(1)} s; ${stored}`;
    case 'incomplete':
      return (
        `${result.crd}: incomplete: ${describeCounts(result)}; ${stored} kept. Failures:\n` +
        result.failures.map((failure) => `  ${failure.object}: ${failure.reason}`).join('\n')
      );
    case 'superseded':
      return `${result.crd}: not trimmed: ${result.detail}; run it again (${stored})`;
  }
}

function migrateArguments(argv: string[]): MigrateArguments | 'help' {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      kind: { type: 'string', multiple: true },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      'writes-per-second': { type: 'string' },
      concurrency: { type: 'string' },
      'page-size': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: true,
  });
  if (values.help) return 'help';
  if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}: name each CRD with --kind`);
  const kinds = values.kind ?? [];
  if (kinds.length === 0)
    throw new UsageError('--kind is required: the CRD to migrate, e.g. --kind widgets.example.com');
  for (const kind of kinds) {
    if (!CRD_NAME.test(kind))
      throw new UsageError(`--kind ${kind} is no CRD name: give <plural>.<group>, e.g. widgets.example.com`);
  }
  const number = (flag: string, value: string | undefined, integer: boolean) => {
    if (value === undefined) return undefined;
    const parsed = Number(value);
    if (!(parsed > 0) || (integer && !Number.isInteger(parsed)))
      throw new UsageError(`--${flag} ${value}: give a ${integer ? 'whole ' : ''}number above 0`);
    return parsed;
  };
  const writesPerSecond = number('writes-per-second', values['writes-per-second'], false);
  const concurrency = number('concurrency', values.concurrency, true);
  const pageSize = number('page-size', values['page-size'], true);
  return {
    kinds: [...new Set(kinds)],
    ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig } : {}),
    ...(values.context !== undefined ? { context: values.context } : {}),
    ...(writesPerSecond !== undefined ? { writesPerSecond } : {}),
    ...(concurrency !== undefined ? { concurrency } : {}),
    ...(pageSize !== undefined ? { pageSize } : {}),
  };
}

/** The kubeconfig as kubectl finds it, or the file given; with `--context`, that context. */
function kubeConfigOf(args: MigrateArguments, cwd: string): KubeConfigSource {
  let config: KubeConfigSource;
  if (args.kubeconfig !== undefined) {
    const path = resolve(cwd, args.kubeconfig);
    if (!existsSync(path)) throw new Error(`--kubeconfig ${args.kubeconfig} does not exist`);
    config = ClusterConfig.fromFile(path);
  } else {
    config = loadKubeConfig();
  }
  if (args.context === undefined) return config;
  if (!(config instanceof ClusterConfig))
    throw new Error(
      '--context needs a kubeconfig file (--kubeconfig or KUBECONFIG), not the in-cluster service account',
    );
  if (!config.getContextObject(args.context)) {
    const known = config.contexts.map((c) => c.name).join(', ') || 'none';
    throw new Error(`the kubeconfig has no context ${args.context} (it has: ${known})`);
  }
  return new ClusterConfig(config.clusters, config.users, config.contexts, args.context);
}
