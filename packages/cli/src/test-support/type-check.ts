// Type-checks TypeScript sources with the project's own compiler and settings (strict,
// noUncheckedIndexedAccess), for tests of generated code: the files are written to a
// temporary folder and `@nestor/operator` resolves to this repository's build.
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const repository = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/** The diagnostics of the files (path relative to a root folder -> source), one line each; [] when they compile. */
export async function typeCheck(files: Record<string, string>): Promise<string[]> {
  const root = await mkdtemp(join(tmpdir(), 'nestor-type-check-'));
  try {
    const names: string[] = [];
    for (const [path, source] of Object.entries(files)) {
      const file = join(root, path);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, source);
      names.push(file);
    }
    const program = ts.createProgram(names, {
      target: ts.ScriptTarget.ES2023,
      lib: ['lib.es2024.d.ts'],
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      noUncheckedIndexedAccess: true,
      noImplicitOverride: true,
      experimentalDecorators: true,
      useDefineForClassFields: false,
      skipLibCheck: true,
      noEmit: true,
      types: ['node'],
      typeRoots: [join(repository, 'node_modules', '@types')],
      paths: {
        '@nestor/operator': [join(repository, 'packages', 'operator', 'dist', 'index.d.ts')],
        '@nestor/operator/fake': [join(repository, 'packages', 'operator', 'dist', 'fake', 'index.d.ts')],
      },
    });
    return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
      const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
      if (!diagnostic.file || diagnostic.start === undefined) return message;
      const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
      return `${diagnostic.file.fileName.slice(root.length + 1)}:${line + 1}:${character + 1}: ${message}`;
    });
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** Syntax errors of one module, without resolving or checking anything: fast enough for properties. */
export function syntaxErrors(source: string): string[] {
  const output = ts.transpileModule(source, {
    reportDiagnostics: true,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2023 },
  });
  return (output.diagnostics ?? []).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}
