import { existsSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { moduleMetadataOf } from '@nestor/operator/manifests';
import { UsageError } from './command-io.js';
import { importModuleFile } from './module-import.js';

/** Imports the compiled module file and picks the module class out of its exports. */
export async function loadModuleClass(
  path: string,
  exportName: string | undefined,
  cwd: string,
): Promise<{ module: object; name: string }> {
  const file = resolve(cwd, path);
  if (!existsSync(file)) throw new UsageError(`--module ${path}: no such file (${file})`);
  if (['.ts', '.mts', '.cts'].includes(extname(file))) {
    throw new UsageError(
      `--module ${path} is TypeScript: build the application and point --module at the compiled .js file`,
    );
  }
  const exports = await importModuleFile(file);
  const isModule = (value: unknown) =>
    (typeof value === 'function' && moduleMetadataOf(value) !== undefined) ||
    (typeof value === 'object' && value !== null && typeof (value as { module?: unknown }).module === 'function');
  // A class with no metadata at all is an empty @Module({}): fine when named explicitly.
  const isEmptyClass = (value: unknown) =>
    typeof value === 'function' && Reflect.getOwnMetadataKeys(value).length === 0;
  const pick = (name: string) => {
    const value = exports[name];
    if (value === undefined) return undefined;
    if (!isModule(value) && !isEmptyClass(value))
      throw new UsageError(`the export ${name} of ${path} is not a Nest module (no @Module() metadata)`);
    return { module: value as object, name };
  };
  if (exportName) {
    const found = pick(exportName);
    if (!found)
      throw new UsageError(
        `${path} has no export named ${exportName}; it exports: ${Object.keys(exports).join(', ') || 'nothing'}`,
      );
    return found;
  }
  if (exports.AppModule !== undefined) return pick('AppModule')!;
  if (exports.default !== undefined && isModule(exports.default))
    return { module: exports.default as object, name: 'default' };
  const modules = Object.keys(exports).filter((key) => isModule(exports[key]));
  if (modules.length === 1) return { module: exports[modules[0]!] as object, name: modules[0]! };
  throw new UsageError(
    modules.length
      ? `${path} exports several Nest modules (${modules.join(', ')}): choose the root one with --export`
      : `${path} exports no Nest module: point --module at the file of the application's root module`,
  );
}
