// `nestor crd diff <old> <new>`: the compatibility check of any two releases of CRDs, the
// one `nestor manifests --check` runs on the CRDs it generates.
import { parseArgs } from 'node:util';
import { COMPATIBILITY_RULES } from '@nestor/operator/manifests';
import { UsageError, type CommandIo } from '../command-io.js';
import { readCrdFiles } from './crd-files.js';
import { checkAgainstPrevious, isInputError, storedVersionsOf } from './compatibility-check.js';

export const CRD_DIFF_USAGE = `Usage: nestor crd diff <old> <new> [options]

Compares two releases of CustomResourceDefinitions, matched by name, and reports every
change that breaks the objects already stored or the clients that use them: the field,
the rule, what changed and what to do instead (docs/upgrades.md). Exits 1 when there is
one that no allowance accepts, 0 otherwise.

<old> and <new>: a CRD file, a YAML or JSON stream of objects (only its CRDs are read:
nestor manifests' output, kubectl get crd -o yaml), or a folder of them (a nestor
manifests --out folder). An old CRD read back from the cluster brings its
status.storedVersions, which decide whether a removed version may still hold objects.

Options:
  --allow <file>       the breaking changes accepted on purpose, each with its reason
                       (crd-compat.yaml: allow: [{ rule, path, reason, crd?, version? }])
  --stored-versions <crd>=<versions>
                       the versions the cluster stores the CRD's objects in, e.g.
                       widgets.example.com=v1 (kubectl get crd widgets.example.com
                       -o jsonpath='{.status.storedVersions}'); repeatable
  -h, --help           show this help

Rules: ${COMPATIBILITY_RULES.join(', ')}`;

export async function crdDiffCommand(argv: string[], io: CommandIo): Promise<number> {
  try {
    let values;
    let positionals: string[];
    try {
      ({ values, positionals } = parseArgs({
        args: argv,
        options: {
          allow: { type: 'string' },
          'stored-versions': { type: 'string', multiple: true },
          help: { type: 'boolean', short: 'h' },
        },
        strict: true,
        allowPositionals: true,
      }));
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    if (values.help) {
      io.stdout(`${CRD_DIFF_USAGE}\n`);
      return 0;
    }
    if (positionals.length !== 2) {
      throw new UsageError(`give the old and the new CRDs, two paths (${positionals.length} given)`);
    }
    const [old, now] = positionals as [string, string];
    const storedVersions = storedVersionsOf(values['stored-versions']);
    const { report, text } = checkAgainstPrevious(
      () => readCrdFiles([now], io.cwd),
      now,
      {
        previous: [old],
        ...(values.allow ? { allow: values.allow } : {}),
        ...(storedVersions ? { storedVersions } : {}),
      },
      io.cwd,
    );
    if (report.compared.length === 0) {
      const removed = [...report.breaking, ...report.allowed].filter((f) => f.rule === 'crd-removed').map((f) => f.crd);
      io.stderr(
        `nestor crd diff: no CRD is in both: ${old} holds ${removed.join(', ')}, ${now} holds ${report.added.join(', ')}\n`,
      );
      return 1;
    }
    io.stdout(text);
    return report.breaking.length ? 1 : 0;
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`nestor crd diff: ${error.message}\n\n${CRD_DIFF_USAGE}\n`);
      return 2;
    }
    if (isInputError(error)) {
      io.stderr(`nestor crd diff: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
