// Allowances: the breaking changes an author accepts, each with the reason, written beside
// the operator's source in `crd-compat.yaml` (docs/upgrades.md). A file rather than a @Field
// option, since the changes most often accepted (a removed field, a removed version) leave no
// decorator behind to carry it.
import { COMPATIBILITY_RULES, type CompatibilityRule } from './compatibility-rules.js';
import { CrdCompatibilityInputError, isMapping } from './compared-crd.js';

/** A breaking change the author accepts: its rule and path, optionally one CRD and version, and why. */
export interface CompatibilityAllowance {
  rule: CompatibilityRule;
  /** The path the finding names: `.spec.replicas`, or `spec.versions[v1beta1]` for a version. */
  path: string;
  /** The CRD (`<plural>.<group>`); absent: any. */
  crd?: string;
  /** The version; absent: any. */
  version?: string;
  reason: string;
}

const KEYS = new Set(['rule', 'path', 'crd', 'version', 'reason']);

/**
 * The allowances of a parsed `crd-compat.yaml`: `{ allow: [{ rule, path, crd?, version?, reason }] }`
 * (an empty file allows nothing). Throws naming the entry and the key that is wrong.
 */
export function readCompatibilityAllowances(value: unknown, origin: string): CompatibilityAllowance[] {
  if (value === null || value === undefined) return [];
  if (!isMapping(value) || Object.keys(value).some((key) => key !== 'allow')) {
    throw new CrdCompatibilityInputError(`${origin}: write the allowances as a list under "allow:" and nothing else`);
  }
  if (value.allow === null || value.allow === undefined) return [];
  if (!Array.isArray(value.allow)) throw new CrdCompatibilityInputError(`${origin}: "allow" is not a list`);
  return value.allow.map((entry: unknown, index: number): CompatibilityAllowance => {
    const at = `${origin}: allow[${index}]`;
    if (!isMapping(entry)) throw new CrdCompatibilityInputError(`${at} is not a mapping of rule, path and reason`);
    const unknown = Object.keys(entry).filter((key) => !KEYS.has(key));
    if (unknown.length) {
      throw new CrdCompatibilityInputError(
        `${at}: unknown key ${unknown.join(', ')} (an allowance has rule, path, reason, and optionally crd and version)`,
      );
    }
    const text = (key: string, required: boolean) => {
      const found = entry[key];
      if (found === undefined && !required) return undefined;
      if (typeof found !== 'string' || found.trim() === '') {
        throw new CrdCompatibilityInputError(
          `${at}: ${key} ${required ? 'is required' : 'is empty'}${key === 'reason' ? ': say why the change is safe' : ''}`,
        );
      }
      return found.trim();
    };
    const rule = text('rule', true)!;
    if (!(COMPATIBILITY_RULES as readonly string[]).includes(rule)) {
      throw new CrdCompatibilityInputError(
        `${at}: "${rule}" is no rule of the check: one of ${COMPATIBILITY_RULES.join(', ')}`,
      );
    }
    const crd = text('crd', false);
    const version = text('version', false);
    return {
      rule: rule as CompatibilityRule,
      path: text('path', true)!,
      ...(crd ? { crd } : {}),
      ...(version ? { version } : {}),
      reason: text('reason', true)!,
    };
  });
}

/** Whether an allowance covers a finding: same rule and path, and its CRD and version if it names them. */
export function allows(
  allowance: CompatibilityAllowance,
  finding: { rule: CompatibilityRule; path: string; crd: string; version?: string },
): boolean {
  return (
    allowance.rule === finding.rule &&
    allowance.path === finding.path &&
    (allowance.crd === undefined || allowance.crd === finding.crd) &&
    (allowance.version === undefined || allowance.version === finding.version)
  );
}
