// JSON.parse holds the event loop for as long as it runs: ~50 ms per MB of a many-keyed
// object on these machines, so one 7 MB review would stall every other request and timer
// for a third of a second. Parsed piece by piece instead, each piece by JSON.parse itself
// (native speed) and the loop let go between pieces, no piece larger than the scanner's
// large-container size. The result is what JSON.parse would give, `__proto__` keys included.
import { setImmediate as turn } from 'node:timers/promises';
import { jsonBytes } from '@nestor/core';

const { closesContainer, closingQuote, COLON, COMMA, isJsonSpace, OPEN_BRACE, OPEN_BRACKET, opensContainer, QUOTE } =
  jsonBytes;

export interface PiecewiseParseOptions {
  /** Large containers found by the JsonScanner: start -> end offsets in `bytes`. */
  largeContainers: ReadonlyMap<number, number>;
  /** Let the event loop turn once this much time went into parsing (default 2 ms). */
  sliceMs?: number;
  /** Small siblings are parsed together up to this many bytes (default 64 KiB, the scanner's large size). */
  pieceBytes?: number;
}

/** Bytes walked between looks at the clock while a large container's children are found. */
const WALK_BYTES = 128 * 1024;

/**
 * `bytes` (UTF-8 JSON) parsed as JSON.parse would, letting the event loop turn between
 * pieces. Throws JSON.parse's SyntaxError on invalid JSON.
 */
export async function parseJsonPiecewise(bytes: Buffer, options: PiecewiseParseOptions): Promise<unknown> {
  const sliceMs = options.sliceMs ?? 2;
  const pieceBytes = options.pieceBytes ?? 64 * 1024;
  const large = options.largeContainers;
  let sliceStart = performance.now();
  const pause = async () => {
    if (performance.now() - sliceStart < sliceMs) return;
    await turn();
    sliceStart = performance.now();
  };
  const parseSpan = (start: number, end: number): unknown => JSON.parse(bytes.toString('utf8', start, end));

  const parse = async (start: number, end: number): Promise<unknown> => {
    const trimmedStart = skipSpace(bytes, start, end);
    const trimmedEnd = skipSpaceBack(bytes, trimmedStart, end);
    const largeEnd = large.get(trimmedStart);
    if (largeEnd === undefined || largeEnd !== trimmedEnd) {
      await pause();
      return parseSpan(trimmedStart, trimmedEnd);
    }
    // Children are taken one at a time and runs of small ones parsed together, one JSON.parse
    // per run of up to pieceBytes: nothing is kept per child (3.5 million spans of [start,
    // end] took 450 MB), so the work's memory is the value's own and one run's.
    const children = new ChildWalker(bytes, large, trimmedStart, trimmedEnd);
    const isLarge = (from: number, to: number) => large.has(skipSpace(bytes, from, to));
    let walked = trimmedStart;
    const walk = async (): Promise<boolean> => {
      if (children.position - walked > WALK_BYTES) {
        await pause();
        walked = children.position;
      }
      return children.next();
    };
    let runStart = -1;
    let runEnd = -1;
    if (bytes[trimmedStart] === OPEN_BRACKET) {
      const array: unknown[] = [];
      const flush = async () => {
        if (runStart < 0) return;
        await pause();
        const run = JSON.parse(`[${bytes.toString('utf8', runStart, runEnd)}]`) as unknown[];
        for (const value of run) array.push(value);
        runStart = -1;
      };
      while (await walk()) {
        const { start: from, end: to } = children;
        if (isLarge(from, to)) {
          await flush();
          array.push(await parse(from, to));
          continue;
        }
        if (runStart >= 0 && to - runStart >= pieceBytes) await flush();
        if (runStart < 0) runStart = from;
        runEnd = to;
      }
      await flush();
      return array;
    }
    const object: Record<string, unknown> = {};
    const flush = async () => {
      if (runStart < 0) return;
      await pause();
      const run = JSON.parse(`{${bytes.toString('utf8', runStart, runEnd)}}`) as Record<string, unknown>;
      for (const key of Object.keys(run)) define(object, key, run[key]);
      runStart = -1;
    };
    while (await walk()) {
      const keyStart = children.start;
      const keyEnd = children.end;
      // A key without a value: JSON.parse says why.
      if (!(await walk())) return parseSpan(trimmedStart, trimmedEnd);
      const { start: from, end: to } = children;
      if (isLarge(from, to)) {
        await flush();
        const key = parseSpan(keyStart, keyEnd);
        if (typeof key !== 'string') return parseSpan(trimmedStart, trimmedEnd);
        define(object, key, await parse(from, to));
        continue;
      }
      if (runStart >= 0 && to - runStart >= pieceBytes) await flush();
      if (runStart < 0) runStart = keyStart;
      runEnd = to;
    }
    await flush();
    return object;
  };

  return parse(0, bytes.length);
}

/** As JSON.parse: `__proto__` is a key like any other, never the prototype. */
function define(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  } else object[key] = value;
}

function skipSpace(bytes: Buffer, start: number, end: number): number {
  while (start < end && isJsonSpace(bytes[start]!)) start++;
  return start;
}

function skipSpaceBack(bytes: Buffer, start: number, end: number): number {
  while (end > start && isJsonSpace(bytes[end - 1]!)) end--;
  return end;
}

/**
 * A container's direct children (keys too, for objects), one span at a time: `start` is its
 * first byte, `end` the separator after it. A large child is jumped over whole, so every
 * byte is walked once at the level of its nearest large ancestor.
 */
class ChildWalker {
  start = 0;
  end = 0;
  /** Where the walk has got to. */
  position: number;
  private readonly object: boolean;
  private readonly last: number;
  private count = 0;
  private done = false;

  constructor(
    private readonly bytes: Buffer,
    private readonly large: ReadonlyMap<number, number>,
    containerStart: number,
    containerEnd: number,
  ) {
    this.object = bytes[containerStart] === OPEN_BRACE;
    this.position = containerStart + 1;
    this.last = containerEnd - 1;
  }

  /** Moves to the next child; false past the last. Throws SyntaxError at a misplaced `,` or `:`. */
  next(): boolean {
    if (this.done) return false;
    const bytes = this.bytes;
    let depth = 0;
    let pieceStart = -1;
    for (let i = this.position; i < this.last; i++) {
      const byte = bytes[i]!;
      if (depth === 0 && (byte === COMMA || byte === COLON)) {
        // Keys and values alternate in an object (`:` after a key, `,` after a value).
        const expected = this.object && this.count % 2 === 0 ? COLON : COMMA;
        if (pieceStart < 0 || byte !== expected) throw new SyntaxError(`Unexpected token in JSON at position ${i}`);
        return this.found(pieceStart, i, i + 1);
      }
      if (depth === 0 && pieceStart < 0 && byte > 0x20) pieceStart = i;
      if (byte === QUOTE) {
        // Past the string at once; one never closed leaves its piece to JSON.parse to refuse.
        const close = closingQuote(bytes, i + 1, this.last);
        i = close < 0 ? this.last : close;
      } else if (opensContainer(byte)) {
        const jump = depth === 0 ? this.large.get(i) : undefined;
        if (jump !== undefined) i = jump - 1;
        else depth++;
      } else if (closesContainer(byte)) depth--;
    }
    this.done = true;
    if (pieceStart >= 0) return this.found(pieceStart, this.last, this.last);
    if (this.count > 0) throw new SyntaxError(`Unexpected token in JSON at position ${this.last}`);
    return false;
  }

  private found(start: number, end: number, resume: number): boolean {
    this.start = start;
    this.end = end;
    this.position = resume;
    this.count++;
    return true;
  }
}
