// Label and field selectors as the API server reads them for LIST, on stored objects.
import type { KubeObject } from '@nestor/core';

type Requirement = (labels: Record<string, string>) => boolean;

/** Parses `a=b,c!=d,e in (f,g),!h,i`; throws a message the API server would give for bad syntax. */
export function labelSelector(selector: string): (object: KubeObject) => boolean {
  const requirements: Requirement[] = [];
  for (const part of splitTopLevel(selector)) {
    const text = part.trim();
    if (!text) continue;
    let match: RegExpExecArray | null;
    if ((match = /^([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(text))) {
      const [, key, op, list] = match as unknown as [string, string, string, string];
      const values = new Set(list.split(',').map((v) => v.trim()));
      requirements.push(
        op === 'in' ? (l) => key in l && values.has(l[key]!) : (l) => !(key in l && values.has(l[key]!)),
      );
    } else if ((match = /^([\w./-]+)\s*(==|=|!=)\s*([\w.-]*)$/.exec(text))) {
      const [, key, op, value] = match as unknown as [string, string, string, string];
      requirements.push(op === '!=' ? (l) => l[key] !== value : (l) => l[key] === value);
    } else if ((match = /^(!?)([\w./-]+)$/.exec(text))) {
      const [, not, key] = match as unknown as [string, string, string];
      requirements.push(not ? (l) => !(key in l) : (l) => key in l);
    } else {
      throw new Error(`unable to parse requirement "${text}" of the label selector "${selector}"`);
    }
  }
  return (object) => {
    const labels = object.metadata?.labels ?? {};
    return requirements.every((r) => r(labels));
  };
}

/** metadata.name and metadata.namespace with =, == and !=: the fields every kind supports. */
export function fieldSelector(selector: string): (object: KubeObject) => boolean {
  const tests: Array<(object: KubeObject) => boolean> = [];
  for (const part of selector.split(',')) {
    const text = part.trim();
    if (!text) continue;
    const match = /^(metadata\.name|metadata\.namespace)\s*(==|=|!=)\s*(.*)$/.exec(text);
    if (!match) {
      throw new Error(
        `FakeKubeClient does not model the field selector "${text}": only metadata.name and metadata.namespace ` +
          `(kind-specific fields such as spec.nodeName need the real API server: use TestEnvironment)`,
      );
    }
    const [, field, op, value] = match as unknown as [string, string, string, string];
    const read = (o: KubeObject) => (field === 'metadata.name' ? o.metadata?.name : o.metadata?.namespace) ?? '';
    tests.push(op === '!=' ? (o) => read(o) !== value : (o) => read(o) === value);
  }
  return (object) => tests.every((t) => t(object));
}

/** Splits on commas outside parentheses. */
function splitTopLevel(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(selector.slice(start));
  return parts;
}
