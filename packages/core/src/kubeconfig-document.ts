// A kubeconfig file's text, parsed and checked before client-node's entry parsers see it:
// they assume each field has its type (a number where `server` should be a string is a
// TypeError deep inside them), and kubectl refuses such a file with the field's name. The
// errors here name the field and its line, and never quote a value (it may be a secret).
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import type { YAMLError } from 'yaml';

// Loaded on first use: in a pod the configuration comes from the service account, no YAML
// is read, and the parser's ~70 modules stay out of the operator's memory (bench/floor.mjs).
let yaml: typeof Yaml | undefined;
const loadYaml = (): typeof Yaml => (yaml ??= createRequire(import.meta.url)('yaml') as typeof Yaml);

/** What a field must hold; fields not listed are passed through unchecked, as kubectl ignores them. */
type Shape =
  | { kind: 'string' | 'boolean' }
  | { kind: 'list'; of: Shape }
  | { kind: 'mapping'; fields: Readonly<Record<string, Shape>>; required?: readonly string[] };

const STRING: Shape = { kind: 'string' };
const BOOLEAN: Shape = { kind: 'boolean' };
const list = (of: Shape): Shape => ({ kind: 'list', of });
const mapping = (fields: Record<string, Shape>, required: string[] = []): Shape => ({
  kind: 'mapping',
  fields,
  required,
});

const EXEC = mapping(
  {
    command: STRING,
    args: list(STRING),
    env: list(mapping({ name: STRING, value: STRING }, ['name'])),
    apiVersion: STRING,
  },
  ['command'],
);
// The fields client-node reads, with kubectl's types.
const KUBECONFIG = mapping({
  clusters: list(
    mapping(
      {
        name: STRING,
        cluster: mapping(
          {
            server: STRING,
            'certificate-authority': STRING,
            'certificate-authority-data': STRING,
            'insecure-skip-tls-verify': BOOLEAN,
            'tls-server-name': STRING,
            'proxy-url': STRING,
          },
          ['server'],
        ),
      },
      ['name', 'cluster'],
    ),
  ),
  users: list(
    mapping(
      {
        name: STRING,
        user: mapping({
          token: STRING,
          'token-file': STRING,
          'client-certificate': STRING,
          'client-certificate-data': STRING,
          'client-key': STRING,
          'client-key-data': STRING,
          username: STRING,
          password: STRING,
          as: STRING,
          exec: EXEC,
          'auth-provider': mapping({
            name: STRING,
            config: mapping({ exec: EXEC, tokenFile: STRING }),
          }),
        }),
      },
      ['name'],
    ),
  ),
  contexts: list(
    mapping({ name: STRING, context: mapping({ cluster: STRING, user: STRING, namespace: STRING }, ['cluster']) }, [
      'name',
      'context',
    ]),
  ),
  'current-context': STRING,
});

const WHAT = 'a kubeconfig must be a YAML mapping with clusters, users, contexts and current-context';

/**
 * The kubeconfig in `text` (YAML 1.1 as kubectl reads it, or JSON) as plain data, every
 * field client-node reads of its type; else an error saying which field is wrong and on
 * which line. A null field counts as absent, as in kubectl.
 */
export function parseKubeconfig(text: string): Record<string, unknown> {
  const { LineCounter, parseDocument } = loadYaml();
  const lineCounter = new LineCounter();
  // YAML 1.1 as kubectl reads it (`insecure-skip-tls-verify: no` is false, not the string "no").
  const document = parseDocument(text, { version: '1.1', lineCounter, logLevel: 'error' });
  const [syntax] = document.errors;
  // The first line of the parser's message: the rest quotes the file, which may hold a token.
  if (syntax) throw new Error(`a kubeconfig must be YAML or JSON: ${syntaxError(syntax)}`);
  let value: unknown;
  try {
    value = document.toJS({ maxAliasCount: 100 });
  } catch (error) {
    // yaml names the alias it could not resolve, and `token: *abc` makes the token an alias:
    // the message up to its own colon, never the name after it.
    const message = (error as Error).message.replace(/^(Unresolved alias[^:]*):.*$/s, '$1');
    // No cause: its message is yaml's, which may quote the token.
    // eslint-disable-next-line preserve-caught-error
    throw new Error(`a kubeconfig must be YAML or JSON: ${message}`);
  }
  if (!isMapping(value)) throw new Error(`${WHAT}, not ${describe(value)}`);
  const lineOf = (path: readonly (string | number)[]): string => {
    // The deepest node of the path that exists (a missing field points at its parent).
    for (let end = path.length; end >= 0; end--) {
      const node = document.getIn(path.slice(0, end), true) as { range?: [number, number, number] } | undefined;
      if (node?.range) return ` (line ${lineCounter.linePos(node.range[0]).line})`;
    }
    return '';
  };
  check(value, KUBECONFIG, [], lineOf);
  refuseCycles(value, lineOf);
  return value;
}

function check(
  value: unknown,
  shape: Shape,
  path: (string | number)[],
  lineOf: (path: readonly (string | number)[]) => string,
): void {
  const fail = (expected: string): never => {
    // YAML reads 1234, true, 2024-01-01 unquoted as a number, a boolean, a date.
    const hint =
      typeof value === 'number' || typeof value === 'boolean' || value instanceof Date
        ? ': quote it to make it a string'
        : '';
    throw new Error(
      `${pathText(path)} must be ${expected}, not ${describe(value)}${lineOf(path)}${expected === 'a string' ? hint : ''}`,
    );
  };
  switch (shape.kind) {
    case 'string':
      if (typeof value !== 'string') fail('a string');
      return;
    case 'boolean':
      if (typeof value !== 'boolean') fail('true or false');
      return;
    case 'list':
      if (!Array.isArray(value)) fail('a list');
      (value as unknown[]).forEach((item, index) => check(item, shape.of, [...path, index], lineOf));
      return;
    case 'mapping': {
      if (!isMapping(value)) fail('a mapping');
      const fields = value as Record<string, unknown>;
      for (const name of shape.required ?? []) {
        const field = own(fields, name);
        if (field === undefined || field === null || field === '') {
          throw new Error(`${pathText([...path, name])} is missing${lineOf([...path, name])}`);
        }
      }
      for (const [name, fieldShape] of Object.entries(shape.fields)) {
        const field = own(fields, name);
        if (field !== undefined && field !== null) check(field, fieldShape, [...path, name], lineOf);
      }
    }
  }
}

/** An alias inside its own anchor makes a cycle, which later code (JSON, copies) would loop on or throw at. */
function refuseCycles(value: unknown, lineOf: (path: readonly (string | number)[]) => string): void {
  const open = new Set<object>();
  const done = new Set<object>();
  const visit = (node: unknown, path: (string | number)[]): void => {
    if (typeof node !== 'object' || node === null || done.has(node)) return;
    if (open.has(node)) {
      throw new Error(
        `${pathText(path)} is an alias of a node that contains it${lineOf(path)}: a kubeconfig cannot refer to itself`,
      );
    }
    open.add(node);
    if (Array.isArray(node)) node.forEach((item, index) => visit(item, [...path, index]));
    else if (isMapping(node)) for (const [key, item] of Object.entries(node)) visit(item, [...path, key]);
    open.delete(node);
    done.add(node);
  };
  visit(value, []);
}

/** The parser's message without the source it quotes: its first line, a quoted token cut out. */
/**
 * These yaml errors put the file's own text in their message (`Not a YAML token: token: …`),
 * and the file may hold a token: they are named in words of our own instead.
 */
const QUOTES_THE_FILE: Partial<Record<YAMLError['code'], string>> = {
  UNEXPECTED_TOKEN: 'unexpected characters',
  TAG_RESOLVE_FAILED: 'a tag that cannot be resolved',
  BAD_COLLECTION_TYPE: 'a tag for another kind of node',
  BAD_PROP_ORDER: 'an anchor or tag before its indicator',
  BAD_DQ_ESCAPE: 'an invalid escape sequence in a double-quoted string',
  BAD_SCALAR_START: 'a plain value that starts with a reserved character',
};

/** What is wrong and where, in words that never quote the file. */
function syntaxError(error: YAMLError): string {
  const at = error.linePos ? ` at line ${error.linePos[0].line}, column ${error.linePos[0].col}` : '';
  const own = QUOTES_THE_FILE[error.code];
  if (own) return `${own}${at}`;
  // The other messages are fixed text; past the first line, yaml quotes the file.
  const first = error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
  return `${first}${at}`;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

function own(fields: Record<string, unknown>, name: string): unknown {
  return Object.hasOwn(fields, name) ? fields[name] : undefined;
}

function pathText(path: readonly (string | number)[]): string {
  if (path.length === 0) return 'the kubeconfig';
  return path.map((part, i) => (typeof part === 'number' ? `[${part}]` : i === 0 ? part : `.${part}`)).join('');
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return 'empty';
  if (Array.isArray(value)) return 'a list';
  if (value instanceof Uint8Array) return 'binary data';
  if (value instanceof Date) return 'a date';
  if (isMapping(value)) return 'a mapping';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'number' || typeof value === 'bigint') return 'a number';
  if (typeof value === 'boolean') return 'a boolean';
  return `a ${typeof value}`;
}
