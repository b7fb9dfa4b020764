// The compatibility check of a release's CRDs against the previous release's: every breaking
// change, by CRD, version and field, with the rule and what to do instead; those the author
// allowed (allowances.ts) apart. Pure: the CLI reads the files and prints the report.
import { allows, type CompatibilityAllowance } from './allowances.js';
import { RULE_REMEDIES, type CompatibilityRule } from './compatibility-rules.js';
import { CrdCompatibilityInputError, type ComparedCrd } from './compared-crd.js';
import { compareCrds } from './version-changes.js';

/** One breaking change. */
export interface CompatibilityFinding {
  /** The CRD, `<plural>.<group>`. */
  crd: string;
  /** The version it concerns; absent for the CRD as a whole. */
  version?: string;
  /**
   * Where: a field of the objects (`.spec.ports[*].name`, `.` for the root, `.*` for a map's
   * values) for a schema rule, or a field of the CRD (`spec.scope`, `spec.versions[v1]`,
   * `spec.conversion`, `metadata.name`) for the others.
   */
  path: string;
  rule: CompatibilityRule;
  /** What changed: `type integer -> string`. */
  change: string;
  /** What it does to stored objects and their clients, and what to do instead. */
  remedy: string;
}

/** A breaking change an allowance accepts, with the allowance's reason. */
export interface AllowedFinding extends CompatibilityFinding {
  reason: string;
}

/** What the check knows besides the CRDs: the cluster's stored versions, the author's allowances. */
export interface CompatibilityCheckOptions {
  /**
   * The versions objects are stored in, per CRD name, as the cluster's
   * status.storedVersions lists them; they replace the previous CRD's own status.
   */
  storedVersions?: Readonly<Record<string, readonly string[]>>;
  /** The breaking changes the author accepts. */
  allowances?: readonly CompatibilityAllowance[];
}

/** The check's verdict: it fails when `breaking` is not empty. */
export interface CompatibilityReport {
  /** The breaking changes no allowance covers: the check fails when there is one. */
  breaking: CompatibilityFinding[];
  allowed: AllowedFinding[];
  /** What breaks nothing but is worth a line: versions retired after a deprecation, allowances that matched nothing. */
  notes: string[];
  /** The CRDs compared (in both). */
  compared: string[];
  /** The CRDs new in this release. */
  added: string[];
}

/** Compares the previous release's CRDs with this one's (`readComparedCrd` reads each). */
export function checkCrdCompatibility(
  previous: readonly ComparedCrd[],
  next: readonly ComparedCrd[],
  options: CompatibilityCheckOptions = {},
): CompatibilityReport {
  const before = byName(previous, 'previous');
  const after = byName(next, 'new');
  for (const name of Object.keys(options.storedVersions ?? {})) {
    if (!before.has(name)) {
      throw new CrdCompatibilityInputError(
        `stored versions are given for ${name}, which the previous CRDs do not hold (${[...before.keys()].join(', ') || 'none'})`,
      );
    }
  }
  const findings: CompatibilityFinding[] = [];
  const notes: string[] = [];
  const compared: string[] = [];
  for (const [name, old] of before) {
    const now = after.get(name);
    if (!now) {
      findings.push(
        finding(name, { rule: 'crd-removed', path: 'metadata.name', change: `${name} is no longer generated` }),
      );
      continue;
    }
    compared.push(name);
    const stored = options.storedVersions?.[name] ?? old.storedVersions;
    try {
      compareCrds(
        old,
        now,
        stored,
        (change) => findings.push(finding(name, change)),
        (text) => notes.push(text),
      );
    } catch (error) {
      if (!(error instanceof CrdCompatibilityInputError)) throw error;
      throw new CrdCompatibilityInputError(`${name} (${old.origin} -> ${now.origin}): ${error.message}`, {
        cause: error,
      });
    }
  }
  const allowances = options.allowances ?? [];
  const used = new Set<CompatibilityAllowance>();
  const breaking: CompatibilityFinding[] = [];
  const allowed: AllowedFinding[] = [];
  for (const found of findings) {
    const allowance = allowances.find((candidate) => allows(candidate, found));
    if (!allowance) {
      breaking.push(found);
      continue;
    }
    used.add(allowance);
    allowed.push({ ...found, reason: allowance.reason });
  }
  for (const allowance of allowances) {
    if (!used.has(allowance)) {
      notes.push(
        `the allowance of ${allowance.rule} at ${allowance.path}${allowance.crd ? ` in ${allowance.crd}` : ''}${allowance.version ? ` ${allowance.version}` : ''} matched no change: remove it`,
      );
    }
  }
  return { breaking, allowed, notes, compared, added: [...after.keys()].filter((name) => !before.has(name)) };
}

function finding(
  crd: string,
  change: { rule: CompatibilityRule; version?: string; path: string; change: string },
): CompatibilityFinding {
  return {
    crd,
    ...(change.version !== undefined ? { version: change.version } : {}),
    path: change.path,
    rule: change.rule,
    change: change.change,
    remedy: RULE_REMEDIES[change.rule],
  };
}

function byName(crds: readonly ComparedCrd[], which: string): Map<string, ComparedCrd> {
  const found = new Map<string, ComparedCrd>();
  for (const crd of crds) {
    const other = found.get(crd.name);
    if (other) {
      throw new CrdCompatibilityInputError(`the ${which} CRDs hold ${crd.name} twice (${other.origin}, ${crd.origin})`);
    }
    found.set(crd.name, crd);
  }
  return found;
}
