// What `nestor manifests --check` and `nestor crd diff` share: the previous CRDs read from
// the paths given, the allowances file, the stored versions of the command line, the check
// and its report.
import { existsSync, readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { parse } from 'yaml';
import {
  checkCrdCompatibility,
  CrdCompatibilityInputError,
  readCompatibilityAllowances,
  type ComparedCrd,
  type CompatibilityReport,
} from '@nestor/operator/manifests';
import { UsageError } from '../command-io.js';
import { CrdSourceError } from '../import/crd-documents.js';
import { readCrdFiles } from './crd-files.js';
import { formatCompatibilityReport } from './compatibility-report.js';

/** The file of allowances beside an operator's source (docs/upgrades.md). */
export const ALLOWANCES_FILE = 'crd-compat.yaml';

/** What `--check` compares against: the previous release's CRDs, its allowances, the versions still stored. */
export interface CompatibilityRequest {
  /** The previous release's CRD files or folders. */
  previous: string[];
  /** The allowances file; undefined: none. */
  allow?: string;
  /** `--stored-versions`, read by storedVersionsOf. */
  storedVersions?: Record<string, string[]>;
}

/** The check of `next` (its CRDs read when asked, after the previous ones) against the previous CRDs, and its report's text. */
export function checkAgainstPrevious(
  next: () => ComparedCrd[],
  nextOrigin: string,
  request: CompatibilityRequest,
  cwd: string,
): { report: CompatibilityReport; text: string } {
  const previous = readCrdFiles(request.previous, cwd);
  const allowFile = request.allow ? resolve(cwd, request.allow) : undefined;
  const shownAllowFile = allowFile ? relative(cwd, allowFile) || allowFile : ALLOWANCES_FILE;
  const allowances = allowFile ? readAllowances(allowFile, shownAllowFile) : [];
  const report = checkCrdCompatibility(previous, next(), {
    allowances,
    ...(request.storedVersions ? { storedVersions: request.storedVersions } : {}),
  });
  const text = formatCompatibilityReport(report, {
    compared: `${request.previous.join(', ')} -> ${nextOrigin}`,
    allowFile: shownAllowFile,
  });
  return { report, text };
}

function readAllowances(path: string, shown: string) {
  if (!existsSync(path)) throw new CrdSourceError(`${shown} does not exist`);
  let value: unknown;
  try {
    value = parse(readFileSync(path, 'utf8'), { prettyErrors: true });
  } catch (error) {
    throw new CrdSourceError(`${shown}: not YAML: ${(error as Error).message}`);
  }
  return readCompatibilityAllowances(value, shown);
}

/** `--stored-versions <crd>=<version>,<version>`, repeatable: the cluster's status.storedVersions per CRD. */
export function storedVersionsOf(values: readonly string[] | undefined): Record<string, string[]> | undefined {
  if (!values?.length) return undefined;
  const stored: Record<string, string[]> = {};
  for (const value of values) {
    const match = /^([a-z0-9.-]+)=([a-z0-9-]+(?:,[a-z0-9-]+)*)$/.exec(value);
    if (!match) {
      throw new UsageError(
        `--stored-versions ${value}: write <crd>=<versions>, e.g. widgets.example.com=v1beta1,v1 (kubectl get crd widgets.example.com -o jsonpath='{.status.storedVersions}')`,
      );
    }
    if (stored[match[1]!]) throw new UsageError(`--stored-versions gives ${match[1]} twice`);
    stored[match[1]!] = match[2]!.split(',');
  }
  return stored;
}

/** Whether an error is about what the user gave (a file, a CRD, an allowance): said without a stack. */
export function isInputError(error: unknown): error is Error {
  return error instanceof CrdSourceError || error instanceof CrdCompatibilityInputError;
}
