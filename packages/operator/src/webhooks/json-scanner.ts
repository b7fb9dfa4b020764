// A review's shape checked from its bytes as they arrive, before anything is parsed: how deep
// it nests, how many objects and arrays it holds, and how many values and keys, the things
// that make JSON.parse cost far more memory and time than the body's size (3.6 million `[]`
// in 7 MB take 400 MB and seconds; 3.5 million numbers, 28 MB held and more while parsed). One pass, constant work per byte, nothing kept but a few offsets; it also
// notes where the large objects and arrays are, so they can be parsed piece by piece.
import { jsonBytes } from '@nestor/core';
import { MalformedReviewError } from './review-envelope.js';

const { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, OPEN_BRACE, OPEN_BRACKET, QUOTE } = jsonBytes;

/** A body past a limit: what was exceeded, in words a reader of the API server's error can act on. */
export class ReviewLimitError extends MalformedReviewError {
  override readonly name: string = 'ReviewLimitError';
}

export interface JsonScanLimits {
  /** Objects and arrays inside each other, the outermost counted as 1. */
  maxDepth: number;
  /** Objects and arrays in all. */
  maxContainers: number;
  /** Values (of any type, containers too) and object keys in all. */
  maxValues: number;
  /** Containers at least this many bytes long are recorded for a piecewise parse. */
  largeContainerBytes: number;
}

/** Strings the scanner keeps, so a refused review can still be answered in its own terms. */
export interface ReviewEnvelopeFields {
  apiVersion?: string;
  kind?: string;
  /** `request.uid`. */
  uid?: string;
}

/** Longest envelope string kept (apiVersion, kind, uid are all short). */
const MAX_CAPTURE = 256;

/**
 * Scans JSON bytes chunk by chunk. Strings are skipped (UTF-8 continuation bytes are never
 * below 0x80, so structural bytes are found byte by byte); the JSON is not validated, which
 * JSON.parse does afterwards on what passed. Throws ReviewLimitError at the first limit crossed.
 */
export class JsonScanner {
  /** Large containers: start offset -> end offset (exclusive), for `parseJsonPiecewise`. */
  readonly largeContainers = new Map<number, number>();
  readonly envelope: ReviewEnvelopeFields = {};
  private offset = 0;
  private depth = 0;
  private deepest = 0;
  private containers = 0;
  private values = 0;
  /** A container was just opened: its first byte that is not space starts its first member. */
  private awaitingFirst = false;
  private inString = false;
  /** Strings not captured are skipped natively, across chunks. */
  private readonly string = new jsonBytes.StreamedString();
  /** In a captured string (read byte by byte): the byte before was a backslash. */
  private escaped = false;
  /** Per open container: its start offset, and whether the next string in it is a key. */
  private readonly starts: number[] = [];
  private readonly isObject: boolean[] = [];
  private expectKey = false;
  /** Keys at depth 1 and 2 (the envelope's `request` and `request.uid`), while scanned. */
  private keyAt1 = '';
  private keyAt2 = '';
  private capture: { target: 'key1' | 'key2' | keyof ReviewEnvelopeFields; bytes: number[] } | undefined;

  constructor(private readonly limits: JsonScanLimits) {}

  /** Containers, values and keys seen so far, and the deepest nesting. */
  get stats(): { containers: number; values: number; depth: number } {
    return { containers: this.containers, values: this.values, depth: this.deepest };
  }

  write(chunk: Uint8Array): void {
    const length = chunk.length;
    for (let i = 0; i < length; i++) {
      if (this.inString && !this.capture) {
        // Most of a large review is strings.
        const end = this.string.close(chunk, i);
        if (end < 0) break; // the string goes on in the next chunk
        i = end;
        this.endString();
        continue;
      }
      const byte = chunk[i]!;
      if (this.inString) {
        // A captured string (an envelope field or key), byte by byte.
        const capture = this.capture!;
        if (this.escaped || (byte !== QUOTE && byte !== BACKSLASH)) {
          if (capture.bytes.length < MAX_CAPTURE) capture.bytes.push(byte);
        }
        if (this.escaped) this.escaped = false;
        else if (byte === BACKSLASH) this.escaped = true;
        else if (byte === QUOTE) this.endString();
        continue;
      }
      switch (byte) {
        case QUOTE:
          if (this.awaitingFirst) this.member(this.offset + i);
          this.startString();
          break;
        case OPEN_BRACE:
        case OPEN_BRACKET:
          if (this.awaitingFirst) this.member(this.offset + i);
          this.open(byte === OPEN_BRACE, this.offset + i);
          break;
        case CLOSE_BRACE:
        case CLOSE_BRACKET:
          this.awaitingFirst = false;
          this.close(byte === CLOSE_BRACE, this.offset + i);
          break;
        case COMMA:
          if (this.isObject[this.depth - 1]) this.expectKey = true;
          if (this.depth > 0) this.member(this.offset + i);
          break;
        case COLON:
          this.expectKey = false;
          break;
        default:
          // A number or a literal (true, false, null) as a container's first member.
          if (this.awaitingFirst && byte > 0x20) this.member(this.offset + i);
      }
    }
    this.offset += length;
  }

  /** One more member of the innermost container: an element, or a key and its value. */
  private member(at: number): void {
    this.awaitingFirst = false;
    this.values += this.isObject[this.depth - 1] ? 2 : 1;
    if (this.values > this.limits.maxValues) {
      throw new ReviewLimitError(
        `the review holds more than ${this.limits.maxValues} values and keys (at byte ${at}); refused unparsed, as it would take far more memory than its size`,
      );
    }
  }

  private open(object: boolean, at: number): void {
    this.depth++;
    this.containers++;
    if (this.depth > this.deepest) this.deepest = this.depth;
    if (this.depth > this.limits.maxDepth) {
      throw new ReviewLimitError(
        `the review nests objects and arrays more than ${this.limits.maxDepth} deep (at byte ${at}): no Kubernetes object needs that; refused unparsed`,
      );
    }
    if (this.containers > this.limits.maxContainers) {
      throw new ReviewLimitError(
        `the review holds more than ${this.limits.maxContainers} objects and arrays (at byte ${at}); refused unparsed, as it would take far more memory than its size`,
      );
    }
    this.starts.push(at);
    this.isObject.push(object);
    this.expectKey = object;
    this.awaitingFirst = true;
    if (this.depth === 2) this.keyAt2 = '';
  }

  private close(object: boolean, at: number): void {
    if (this.depth === 0) return; // JSON.parse will say what is wrong
    const start = this.starts.pop()!;
    // `{]` is not recorded, so it is parsed whole and JSON.parse refuses it.
    const matched = this.isObject.pop() === object;
    this.depth--;
    // After a value inside an object comes a comma (then a key) or the end: no key yet.
    this.expectKey = false;
    if (matched && at + 1 - start >= this.limits.largeContainerBytes) this.largeContainers.set(start, at + 1);
  }

  private startString(): void {
    this.inString = true;
    const inObject = this.isObject[this.depth - 1] === true;
    if (inObject && this.expectKey) {
      if (this.depth === 1) this.capture = { target: 'key1', bytes: [] };
      else if (this.depth === 2 && this.keyAt1 === 'request') this.capture = { target: 'key2', bytes: [] };
      return;
    }
    if (this.depth === 1 && (this.keyAt1 === 'apiVersion' || this.keyAt1 === 'kind')) {
      this.capture = { target: this.keyAt1, bytes: [] };
    } else if (this.depth === 2 && this.keyAt1 === 'request' && this.keyAt2 === 'uid') {
      this.capture = { target: 'uid', bytes: [] };
    }
  }

  private endString(): void {
    this.inString = false;
    const capture = this.capture;
    this.capture = undefined;
    if (!capture) return;
    // Escapes are not decoded: envelope fields never need them, and a key that has one is
    // not one of the names looked for.
    const text = Buffer.from(capture.bytes).toString('utf8');
    if (capture.target === 'key1') this.keyAt1 = text;
    else if (capture.target === 'key2') this.keyAt2 = text;
    else this.envelope[capture.target] ??= text;
  }
}
