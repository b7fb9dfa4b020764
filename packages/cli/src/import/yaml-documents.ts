// The YAML documents of another project's file, read within bounds of time and memory. The
// yaml package builds every node of a document, and on some shapes it is worse than linear
// (a 15.5 MiB list of small mappings took 67 s and 2.6 GB): so a document is parsed only if
// its text names a CustomResourceDefinition (a List of them does too), which a line scan
// finds, and the parse runs in a worker thread with a heap limit and a deadline.
import { Worker } from 'node:worker_threads';

/** A document of the text: where it is, and what a line scan says of it. */
export interface YamlDocument {
  /** Offset of its first character in the text, and of the one after its last. */
  start: number;
  end: number;
  /** Whether it may hold a CRD: its text names CustomResourceDefinition. */
  candidate: boolean;
  /** Its top-level `kind:` and `metadata.name`, as far as a line scan of block YAML sees them. */
  kind?: string;
  name?: string;
}

/** A document the parser refused: a syntax error where (1-based) in the whole text, or a value it would not build. */
export interface YamlFailure {
  message: string;
  at?: { line: number; column: number };
}

/** The heap the parser may take: a 16 MiB CRD bundle needs about 240 MB. */
export const PARSE_HEAP_MB = 768;
/** The parser's deadline: a 16 MiB CRD bundle takes about 2.5 s. */
export const PARSE_DEADLINE_MS = 30_000;

// `---` at the start of a line is a document marker wherever it appears (YAML forbids it in content).
const DOCUMENT_START = /^---(?=[ \t\r\n]|$)/gm;
const TOP_KIND = /^["']?kind["']?[ \t]*:[ \t]*["']?([A-Za-z0-9.-]+)/m;
const TOP_METADATA = /^["']?metadata["']?[ \t]*:(.*)$/m;

/** The documents of a YAML text, split at their markers, each scanned for its kind. */
export function yamlDocuments(text: string): YamlDocument[] {
  const starts = [0];
  for (const match of text.matchAll(DOCUMENT_START)) if (match.index > 0) starts.push(match.index);
  return starts.map((start, i) => {
    const end = starts[i + 1] ?? text.length;
    const body = text.slice(start, end);
    const kind = TOP_KIND.exec(body)?.[1];
    const name = nameOf(body);
    return {
      start,
      end,
      candidate: body.includes('CustomResourceDefinition'),
      ...(kind ? { kind } : {}),
      ...(name ? { name } : {}),
    };
  });
}

/** Whether a document holds anything but comments, blank lines and markers. */
export function isEmptyDocument(text: string): boolean {
  return text
    .split('\n')
    .every((line) => /^\s*(#.*)?$/.test(line) || /^(---|\.\.\.)\s*(#.*)?$/.test(line) || /^%/.test(line));
}

/** metadata.name from `metadata:` followed by an indented `name:`, or a flow `metadata: {name: x}`. */
function nameOf(body: string): string | undefined {
  const metadata = TOP_METADATA.exec(body);
  if (!metadata) return undefined;
  const flow = /^\s*\{.*?\bname\s*:\s*["']?([^"',}\s]+)/.exec(metadata[1]!);
  if (flow) return flow[1];
  const rest = body.slice(metadata.index + metadata[0].length).split('\n');
  for (const line of rest.slice(1)) {
    if (/^\S/.test(line)) break; // the next top-level key: metadata is over
    const field = /^\s+name\s*:\s*["']?([^"'\s#]+)/.exec(line);
    if (field) return field[1];
  }
  return undefined;
}

/**
 * The values of the documents at these ranges of the text, parsed in a worker thread that
 * is stopped at the deadline or the heap limit. Rejects with a message for the user.
 */
export async function parseYamlDocuments(
  text: string,
  ranges: Array<{ start: number; end: number }>,
  { deadlineMs = PARSE_DEADLINE_MS, heapMb = PARSE_HEAP_MB } = {},
): Promise<{ values: unknown[] } | { failure: YamlFailure }> {
  if (ranges.length === 0) return { values: [] };
  const worker = new Worker(new URL('./yaml-parse.worker.js', import.meta.url), {
    workerData: { text, ranges },
    resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: Math.min(64, heapMb) },
    stdout: true,
    stderr: true,
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    const answer = await new Promise<{ values: unknown[] } | { error: string; offset?: number }>((resolve, reject) => {
      timer = setTimeout(
        () => reject(new YamlBoundsError(`parsing it took more than ${deadlineMs / 1000} s`)),
        deadlineMs,
      );
      worker.once('message', resolve);
      worker.once('error', (error: Error & { code?: string }) =>
        reject(
          error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? new YamlBoundsError(`parsing it took more than ${heapMb} MB`)
            : error,
        ),
      );
      worker.once('exit', (code) => reject(new Error(`the YAML parser stopped (exit code ${code})`)));
    });
    if ('values' in answer) return answer;
    const at = answer.offset === undefined ? {} : { at: position(text, answer.offset) };
    return { failure: { message: answer.error, ...at } };
  } finally {
    clearTimeout(timer);
    await worker.terminate();
  }
}

/** The parse went past its time or memory: the file is not a CRD file people publish. */
export class YamlBoundsError extends Error {
  override readonly name = 'YamlBoundsError';
}

function position(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}
