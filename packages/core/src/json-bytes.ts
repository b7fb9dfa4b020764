// The rules every scanner of UTF-8 JSON bytes shares: core's streamed LIST decoder and the
// webhooks' review scanner and piecewise parser. They scan for structure only and leave the
// rest to JSON.parse; what each is after stays in its own file.

// The bytes that give JSON its structure (no UTF-8 continuation byte is below 0x80, so none
// is ever mistaken for one of these).
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;

/** `{` or `[`: one level deeper. */
export function opensContainer(byte: number): boolean {
  return byte === OPEN_BRACE || byte === OPEN_BRACKET;
}

/** `}` or `]`: one level up. */
export function closesContainer(byte: number): boolean {
  return byte === CLOSE_BRACE || byte === CLOSE_BRACKET;
}

/** JSON's whitespace (RFC 8259 §2): space, tab, line feed, carriage return. */
export function isJsonSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/**
 * The offset of the quote that closes a string whose content starts at `from`, found with a
 * native search (most of a large body is strings), or -1 when it is not before `end`.
 * A quote is escaped when an odd run of backslashes comes right before it.
 */
export function closingQuote(bytes: Uint8Array, from: number, end = bytes.length): number {
  for (let at = from; ;) {
    const quote = bytes.indexOf(QUOTE, at);
    if (quote < 0 || quote >= end) return -1;
    if (backslashesBefore(bytes, from, quote) % 2 === 0) return quote;
    at = quote + 1;
  }
}

/** The run of backslashes that ends just before `at`, not counting back past `from`. */
export function backslashesBefore(bytes: Uint8Array, from: number, at: number): number {
  let count = 0;
  while (at - count - 1 >= from && bytes[at - count - 1] === BACKSLASH) count++;
  return count;
}

/**
 * A string skipped across the chunks of a streamed body: where it closes in each chunk, and
 * a backslash that the end of one chunk separates from the byte it escapes in the next.
 */
export class StreamedString {
  /** The chunk before ended on an odd run of backslashes: this chunk's first byte is escaped. */
  private escaped = false;

  /**
   * From `from` inside the string: the offset of its closing quote, or -1 when the chunk ends
   * first. closingQuote's search, written out to note the run of backslashes at the chunk's
   * end as it goes: one call less per string, 3% of the LIST decoder's time (measured).
   */
  close(chunk: Uint8Array, from: number): number {
    if (this.escaped) {
      this.escaped = false;
      from++;
    }
    for (let at = from; ;) {
      const quote = chunk.indexOf(QUOTE, at);
      const run = backslashesBefore(chunk, from, quote < 0 ? chunk.length : quote);
      if (quote < 0) {
        this.escaped = run % 2 === 1;
        return -1;
      }
      if (run % 2 === 0) return quote;
      at = quote + 1;
    }
  }
}
