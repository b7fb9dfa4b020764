import { spawnSync } from 'node:child_process';
import { writeSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** A syntax error in a file of the application, with where it is. */
export class ModuleSyntaxError extends Error {
  override readonly name = 'ModuleSyntaxError';
  constructor(
    message: string,
    /** `path:line:column`, or undefined when no file could be found at fault. */
    readonly location: string | undefined,
  ) {
    super(message);
  }
}

/** How many of the files loaded last are checked for the syntax error: the one at fault is the last in practice. */
const FILES_CHECKED = 8;

/**
 * Imports the application's compiled module file. A SyntaxError from Node's ES module
 * loader carries no file or line ("Unexpected token ';'"): Node keeps the position for
 * its own fatal-error printout only. So the files loaded are recorded (a load hook), and
 * on a SyntaxError the last ones are parsed again with `node --check`, which prints the
 * file, line and a caret under the column; the first that fails is the one at fault.
 * A CommonJS file's SyntaxError already starts its stack with `file:line`: that is used.
 */
export async function importModuleFile(
  file: string,
  options: { timeoutMs?: number } = {},
): Promise<Record<string, unknown>> {
  const loaded: string[] = [];
  const hooks = registerHooks({
    load(url, context, next) {
      if (url.startsWith('file:')) loaded.push(url);
      return next(url, context);
    },
  });
  const timeoutMs = options.timeoutMs ?? IMPORT_TIMEOUT_MS;
  let deadline: NodeJS.Timeout | undefined;
  // A module that exits the process while imported (a main.ts imported by mistake) would
  // end the command with its code, no output and no word: the exit is made a failure, named.
  const exitGuard = (code: number) => {
    writeSync(
      2,
      `nestor manifests: ${file} called process.exit(${code}) while it was imported, so nothing was generated: ` +
        'point --module at the root module, not at the file that starts the application, and exit in main.ts only\n',
    );
    process.exitCode = 1;
  };
  process.on('exit', exitGuard);
  try {
    return await Promise.race([
      import(pathToFileURL(file).href) as Promise<Record<string, unknown>>,
      new Promise<never>((_, reject) => {
        deadline = setTimeout(
          () =>
            reject(
              new Error(
                `${file} did not finish importing within ${timeoutMs / 1000} s: a module of the application ` +
                  'awaits something at its top level (a connection?). The manifests need no cluster or network: ' +
                  'do that in a provider, which nestor manifests does not start',
              ),
            ),
          timeoutMs,
        );
      }),
    ]);
  } catch (error) {
    if (error instanceof SyntaxError) throw located(error, loaded);
    throw thrownAt(error);
  } finally {
    clearTimeout(deadline);
    process.off('exit', exitGuard);
    hooks.deregister();
  }
}

/** How long importing the module may take: more than enough to load any application's files. */
const IMPORT_TIMEOUT_MS = 60_000;

/** An error a module threw while being imported, its message given the first place in a file it came from. */
function thrownAt(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const frame = fileFrame(error.stack ?? '');
  if (frame) error.message = `${error.message} (thrown at ${frame} while importing the module)`;
  return error;
}

/** The first stack frame in a file (not Node's own code), as `path:line:column`. */
function fileFrame(stack: string): string | undefined {
  for (const line of stack.split('\n').slice(1)) {
    const match = /^\s+at (?:.*\()?(file:\/\/[^\s)]+|\/[^\s)]+):(\d+):(\d+)\)?$/.exec(line);
    if (match) return `${match[1]!.startsWith('file:') ? fileURLToPath(match[1]!) : match[1]}:${match[2]}:${match[3]}`;
  }
  return undefined;
}

function located(error: SyntaxError, loaded: string[]): ModuleSyntaxError {
  const decorated = positioned(error.stack ?? '');
  if (decorated) return syntaxError(error.message, decorated);
  // Thrown by running code (JSON.parse at the top level), not by the parser: its stack says where.
  const frame = fileFrame(error.stack ?? '');
  if (frame) return new ModuleSyntaxError(`${frame}: SyntaxError: ${error.message}`, frame);
  for (const url of loaded.slice(-FILES_CHECKED).reverse()) {
    const path = fileURLToPath(url);
    // The path after `--`: a file named like a flag stays a file.
    const check = spawnSync(process.execPath, ['--check', '--', path], { encoding: 'utf8', timeout: 30_000 });
    if (check.status === 0 || check.error) continue;
    const position = positioned(check.stderr);
    if (position) return syntaxError(error.message, position);
  }
  // A SyntaxError at link time ("does not provide an export named"): every file parses.
  return new ModuleSyntaxError(
    `${error.message} (while importing ${loaded.length ? fileURLToPath(loaded.at(-1)!) : 'the module'})`,
    undefined,
  );
}

interface Position {
  path: string;
  line: number;
  column?: number;
  source: string;
}

/** Node's `path:line`, the source line and a caret under the column, as `node --check` and a CommonJS stack give them. */
function positioned(text: string): Position | undefined {
  const [head, source, caret] = text.split('\n', 3);
  const match = /^(.+):(\d+)$/.exec(head ?? '');
  if (!match) return undefined;
  const path = match[1]!.startsWith('file:') ? fileURLToPath(match[1]!) : match[1]!;
  const column = caret !== undefined && /^\s*\^+\s*$/.test(caret) ? caret.indexOf('^') + 1 : undefined;
  return { path, line: Number(match[2]), ...(column ? { column } : {}), source: source ?? '' };
}

/** The message: `path:line:column: SyntaxError: ...`, then the source line around the column, with a caret. */
function syntaxError(message: string, { path, line, column, source }: Position): ModuleSyntaxError {
  const location = `${path}:${line}${column ? `:${column}` : ''}`;
  // A minified line may be very long: show 60 characters either side of the column.
  const from = Math.max(0, (column ?? 1) - 61);
  const excerpt = source.slice(from, from + 120);
  const pointer = column ? `\n  ${' '.repeat(column - 1 - from)}^` : '';
  return new ModuleSyntaxError(`${location}: SyntaxError: ${message}\n  ${excerpt}${pointer}`, location);
}
