// The bytes that give JSON its structure, for the scanners that walk UTF-8 JSON byte by byte
// (no UTF-8 continuation byte is below 0x80, so none is ever mistaken for one of these).
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;

/**
 * The offset of the quote that closes a string whose content starts at `from`, found with a
 * native search (most of a large review is strings), or -1 when it is not before `end`.
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
