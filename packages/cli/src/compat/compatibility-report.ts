// The compatibility check's report as the commands print it: each breaking change with its
// field, rule, what changed and what to do, then the allowances to paste for those the author
// accepts, then what was allowed and the notes.
import { stringify } from 'yaml';
import type { CompatibilityFinding, CompatibilityReport } from '@nestor/operator/manifests';

/** Longer CEL rules and patterns are cut in the report: the path says where to read them whole. */
const MAX_CHANGE = 160;

export interface ReportContext {
  /** What was compared with what, for the first line: `release-1/ -> the generated CRDs`. */
  compared: string;
  /** The allowances file read, or where one would be read. */
  allowFile: string;
}

export function formatCompatibilityReport(report: CompatibilityReport, context: ReportContext): string {
  const lines: string[] = [];
  const crds = `${report.compared.length} CRD(s) compared`;
  if (report.breaking.length === 0) {
    lines.push(
      `no breaking change (${context.compared}): ${crds}${report.compared.length ? `, ${report.compared.join(', ')}` : ''}`,
    );
  } else {
    lines.push(`${report.breaking.length} breaking change(s) (${context.compared}), ${crds}:`);
    for (const finding of report.breaking) {
      lines.push(
        '',
        `${where(finding)}`,
        `  ${finding.rule}: ${shortened(finding.change)}`,
        `  what to do: ${finding.remedy}`,
      );
    }
    lines.push(
      '',
      `To accept a change on purpose, add it to ${context.allowFile} with the reason it is safe:`,
      stringify(
        {
          allow: report.breaking.map((finding) => ({
            rule: finding.rule,
            crd: finding.crd,
            ...(finding.version ? { version: finding.version } : {}),
            path: finding.path,
            reason: '<why this is safe>',
          })),
        },
        { lineWidth: 0 },
      ).trimEnd(),
    );
  }
  if (report.allowed.length) {
    lines.push('', `allowed by ${context.allowFile}:`);
    for (const finding of report.allowed) lines.push(`  ${where(finding)}: ${finding.rule}: ${finding.reason}`);
  }
  if (report.added.length) lines.push('', `new CRD(s): ${report.added.join(', ')}`);
  for (const note of report.notes) lines.push(`note: ${note}`);
  return `${lines.join('\n')}\n`;
}

function where(finding: CompatibilityFinding): string {
  return [finding.crd, finding.version, finding.path].filter(Boolean).join(' ');
}

function shortened(text: string): string {
  return text.length > MAX_CHANGE ? `${text.slice(0, MAX_CHANGE - 1)}…` : text;
}
