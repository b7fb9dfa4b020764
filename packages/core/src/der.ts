// ASN.1 DER encoding: only the types an X.509 certificate is made of (RFC 5280, X.690).

/** One value: its tag, its length, its content. */
function tlv(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), encodeLength(content.length), content]);
}

/** Short form below 128, else the long form: 0x80 | byte count, then the bytes, big-endian. */
function encodeLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export const sequence = (...items: Buffer[]): Buffer => tlv(0x30, Buffer.concat(items));
export const set = (...items: Buffer[]): Buffer => tlv(0x31, Buffer.concat(items));
export const boolean = (value: boolean): Buffer => tlv(0x01, Buffer.from([value ? 0xff : 0x00]));
export const octetString = (content: Buffer): Buffer => tlv(0x04, content);
export const utf8String = (text: string): Buffer => tlv(0x0c, Buffer.from(text, 'utf8'));
/** A BIT STRING of whole bytes (no unused bits): keys, signatures. */
export const bitString = (content: Buffer): Buffer => tlv(0x03, Buffer.concat([Buffer.from([0]), content]));
/** [n] EXPLICIT: a constructed context-specific tag around a whole value. */
export const explicit = (n: number, value: Buffer): Buffer => tlv(0xa0 | n, value);
/** [n] IMPLICIT of a primitive type (a GeneralName's dNSName [2] or iPAddress [7]). */
export const implicit = (n: number, content: Buffer): Buffer => tlv(0x80 | n, content);

/** A non-negative INTEGER from its big-endian bytes: no redundant leading zeros, a zero before a high bit. */
export function unsignedInteger(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const trimmed = bytes.subarray(start);
  return tlv(0x02, trimmed[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
}

/**
 * A BIT STRING of named bits (KeyUsage): bit 0 is the first byte's high bit. DER drops
 * trailing zero bits and says how many bits of the last byte are unused.
 */
export function namedBits(bits: readonly number[]): Buffer {
  const last = Math.max(...bits);
  const content = Buffer.alloc(Math.floor(last / 8) + 1);
  for (const bit of bits) {
    const at = Math.floor(bit / 8);
    content[at] = (content[at] ?? 0) | (0x80 >> (bit % 8));
  }
  return tlv(0x03, Buffer.concat([Buffer.from([7 - (last % 8)]), content]));
}

/** An OBJECT IDENTIFIER from its dotted form: the first two arcs in one byte, then base 128. */
export function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  const bytes: number[] = [arcs[0]! * 40 + arcs[1]!];
  for (const arc of arcs.slice(2)) {
    const base128: number[] = [arc & 0x7f];
    for (let rest = Math.floor(arc / 128); rest > 0; rest = Math.floor(rest / 128))
      base128.unshift(0x80 | (rest & 0x7f));
    bytes.push(...base128);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** RFC 5280 §4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050, both in UTC to the second. */
export function time(date: Date): Buffer {
  const iso = date.toISOString(); // 2025-01-31T12:34:56.789Z
  const digits = iso.slice(0, 19).replace(/[-:T]/g, ''); // 20250131123456
  const year = date.getUTCFullYear();
  return year < 2050
    ? tlv(0x17, Buffer.from(`${digits.slice(2)}Z`, 'ascii'))
    : tlv(0x18, Buffer.from(`${digits}Z`, 'ascii'));
}

/** Reading back what is written above: enough to take apart a certificate or a public key. */
export interface Element {
  tag: number;
  /** The whole element: tag, length and content. */
  bytes: Buffer;
  content: Buffer;
}

/** The element at `offset` of `buffer`; throws on a truncated or indefinite-length one. */
export function read(buffer: Buffer, offset = 0): Element {
  const tag = buffer[offset];
  const first = buffer[offset + 1];
  if (tag === undefined || first === undefined) throw new Error('DER: truncated element');
  let length = first;
  let header = 2;
  if (first & 0x80) {
    const count = first & 0x7f;
    if (count === 0 || count > 4) throw new Error(`DER: unsupported length of ${count} bytes`);
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + (buffer[offset + 2 + i] ?? 0);
    header += count;
  }
  const end = offset + header + length;
  if (end > buffer.length) throw new Error('DER: truncated element');
  return { tag, bytes: buffer.subarray(offset, end), content: buffer.subarray(offset + header, end) };
}

/** The elements inside a constructed one (a SEQUENCE, a SET, an EXPLICIT tag). */
export function children(element: Element): Element[] {
  const items: Element[] = [];
  for (let offset = 0; offset < element.content.length;) {
    const item = read(element.content, offset);
    items.push(item);
    offset += item.bytes.length;
  }
  return items;
}
