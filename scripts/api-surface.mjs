#!/usr/bin/env node
// The public surface of a package, measured on its built .d.ts: for each entry of its
// package.json "exports", the names it exports (`export *` followed, through other
// packages too), and which of them carry no TSDoc.
//
//   node scripts/api-surface.mjs [package dir, default packages/operator] [--names] [--undocumented]
//        [--max-root N]   fail when the root entry exports more than N names
//        [--require-docs] fail when a name of the root entry has no TSDoc
//
// Run it after `npm run build`.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const option = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : undefined;
};
const dir = resolve(
  args.find((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--max')) ?? 'packages/operator',
);
const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));

const entries = Object.entries(pkg.exports ?? { '.': { types: pkg.types } })
  .map(([key, value]) => [key, typeof value === 'string' ? value : value.types])
  .filter(([, types]) => types?.endsWith('.d.ts'))
  .map(([key, types]) => [key, resolve(dir, types)]);

const program = ts.createProgram(
  entries.map(([, file]) => file),
  {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2023,
    skipLibCheck: true,
    noEmit: true,
  },
);
const checker = program.getTypeChecker();

/** Whether a declaration carries a TSDoc comment of its own (`/** ... *\/` right before it). */
/** Whether the name is exported deprecated (`export { /** @deprecated ... *\/ name }`): kept for a release. */
function deprecated(symbol) {
  return (symbol.declarations ?? []).some((declaration) =>
    ts.getJSDocTags(declaration).some((tag) => tag.tagName.text === 'deprecated'),
  );
}

function documented(symbol) {
  // The declaration, or a re-export on the way to it (`export { /** ... */ name } from`).
  for (let step = symbol; step;) {
    if (step.getDocumentationComment(checker).length > 0) return true;
    if ((step.declarations ?? []).some((declaration) => ts.getJSDocCommentsAndTags(declaration).length > 0))
      return true;
    step = step.flags & ts.SymbolFlags.Alias ? checker.getImmediateAliasedSymbol(step) : undefined;
  }
  return false;
}

let failed = false;
const report = [];
for (const [key, file] of entries) {
  const source = program.getSourceFile(file);
  if (!source) throw new Error(`${file}: not found (run npm run build first)`);
  const moduleSymbol = checker.getSymbolAtLocation(source);
  const exports = moduleSymbol ? checker.getExportsOfModule(moduleSymbol) : [];
  const names = exports.map((symbol) => symbol.getName()).sort();
  const undocumented = exports
    .filter((symbol) => !documented(symbol))
    .map((symbol) => symbol.getName())
    .sort();
  const entry = `${pkg.name}${key === '.' ? '' : key.slice(1)}`;
  report.push({
    entry,
    names: names.length,
    deprecated: exports.filter(deprecated).length,
    undocumented: undocumented.length,
  });
  if (flag('--names')) console.log(`${entry}\n${names.map((n) => `  ${n}`).join('\n')}`);
  if (flag('--undocumented') && undocumented.length)
    console.log(`${entry}: no TSDoc\n${undocumented.map((n) => `  ${n}`).join('\n')}`);
  if (key === '.') {
    const max = option('--max-root');
    if (max !== undefined && names.length > max) {
      console.error(`${entry} exports ${names.length} names, more than ${max}`);
      failed = true;
    }
    if (flag('--require-docs') && undocumented.length) {
      console.error(`${entry}: ${undocumented.length} names without TSDoc: ${undocumented.join(', ')}`);
      failed = true;
    }
  }
}
console.table(report);
if (failed) process.exitCode = 1;
