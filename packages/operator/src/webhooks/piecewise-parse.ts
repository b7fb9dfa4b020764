// JSON.parse holds the event loop for as long as it runs: ~50 ms per MB of a many-keyed
// object on these machines, so one 7 MB review would stall every other request and timer
// for a third of a second. Parsed piece by piece instead, each piece by JSON.parse itself
// (native speed) and the loop let go between pieces, no piece larger than the scanner's
// large-container size. The result is what JSON.parse would give, `__proto__` keys included.
import { setImmediate as turn } from 'node:timers/promises';
import {
  CLOSE_BRACE,
  CLOSE_BRACKET,
  closingQuote,
  COLON,
  COMMA,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
} from './json-bytes.js';

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

  // A container's direct children, as [start, end) spans (keys too, for objects), found
  // by walking its bytes; a large child is jumped over whole, so every byte is walked once
  // at the level of its nearest large ancestor.
  const children = async (start: number, end: number): Promise<Array<[number, number]>> => {
    const spans: Array<[number, number]> = [];
    const object = bytes[start] === OPEN_BRACE;
    let depth = 0;
    let pieceStart = -1;
    let walked = start;
    for (let i = start + 1; i < end - 1; i++) {
      if (i - walked > WALK_BYTES) {
        await pause();
        walked = i;
      }
      const byte = bytes[i]!;
      if (depth === 0 && (byte === COMMA || byte === COLON)) {
        // Keys and values alternate in an object (`:` after a key, `,` after a value).
        const expected = object && spans.length % 2 === 0 ? COLON : COMMA;
        if (pieceStart < 0 || byte !== expected) throw new SyntaxError(`Unexpected token in JSON at position ${i}`);
        spans.push([pieceStart, i]);
        pieceStart = -1;
        continue;
      }
      if (depth === 0 && pieceStart < 0 && byte > 0x20) pieceStart = i;
      if (byte === QUOTE) {
        // Past the string at once; one never closed leaves its piece to JSON.parse to refuse.
        const close = closingQuote(bytes, i + 1, end - 1);
        i = close < 0 ? end : close;
      } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
        const jump = depth === 0 ? large.get(i) : undefined;
        if (jump !== undefined) i = jump - 1;
        else depth++;
      } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) depth--;
    }
    if (pieceStart >= 0) spans.push([pieceStart, end - 1]);
    else if (spans.length > 0) throw new SyntaxError(`Unexpected token in JSON at position ${end - 1}`);
    return spans;
  };

  const parse = async (start: number, end: number): Promise<unknown> => {
    const trimmedStart = skipSpace(bytes, start, end);
    const trimmedEnd = skipSpaceBack(bytes, trimmedStart, end);
    const largeEnd = large.get(trimmedStart);
    if (largeEnd === undefined || largeEnd !== trimmedEnd) {
      await pause();
      return parseSpan(trimmedStart, trimmedEnd);
    }
    const spans = await children(trimmedStart, trimmedEnd);
    const isLarge = (span: [number, number]) => large.has(skipSpace(bytes, span[0], span[1]));
    // Runs of small children are parsed together, one JSON.parse per run of up to pieceBytes.
    if (bytes[trimmedStart] === OPEN_BRACKET) {
      const array: unknown[] = [];
      for (let k = 0; k < spans.length;) {
        if (isLarge(spans[k]!)) {
          array.push(await parse(spans[k]![0], spans[k]![1]));
          k++;
          continue;
        }
        let last = k;
        while (last + 1 < spans.length && !isLarge(spans[last + 1]!) && spans[last + 1]![1] - spans[k]![0] < pieceBytes)
          last++;
        await pause();
        const run = JSON.parse(`[${bytes.toString('utf8', spans[k]![0], spans[last]![1])}]`) as unknown[];
        for (const value of run) array.push(value);
        k = last + 1;
      }
      return array;
    }
    if (spans.length % 2 !== 0) return parseSpan(trimmedStart, trimmedEnd); // JSON.parse says why
    const object: Record<string, unknown> = {};
    for (let k = 0; k < spans.length;) {
      if (isLarge(spans[k + 1]!)) {
        const key = parseSpan(spans[k]![0], spans[k]![1]);
        if (typeof key !== 'string') return parseSpan(trimmedStart, trimmedEnd);
        define(object, key, await parse(spans[k + 1]![0], spans[k + 1]![1]));
        k += 2;
        continue;
      }
      let last = k;
      while (last + 2 < spans.length && !isLarge(spans[last + 3]!) && spans[last + 3]![1] - spans[k]![0] < pieceBytes)
        last += 2;
      await pause();
      const run = JSON.parse(`{${bytes.toString('utf8', spans[k]![0], spans[last + 1]![1])}}`) as Record<
        string,
        unknown
      >;
      for (const key of Object.keys(run)) define(object, key, run[key]);
      k = last + 2;
    }
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

function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

function skipSpace(bytes: Buffer, start: number, end: number): number {
  while (start < end && isSpace(bytes[start]!)) start++;
  return start;
}

function skipSpaceBack(bytes: Buffer, start: number, end: number): number {
  while (end > start && isSpace(bytes[end - 1]!)) end--;
  return end;
}
