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
