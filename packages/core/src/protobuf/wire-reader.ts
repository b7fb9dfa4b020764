/** Bytes that are not the protobuf they claim to be: truncated, corrupt, or not what the schema says. */
export class ProtobufDecodeError extends Error {
  override readonly name = 'ProtobufDecodeError';
}

// Wire types (https://protobuf.dev/programming-guides/encoding/).
export const VARINT = 0;
export const FIXED64 = 1;
export const LENGTH_DELIMITED = 2;
export const FIXED32 = 5;

const TWO_32 = 2 ** 32;

// Buffer's own slicers, without toString's argument checks (they are on Buffer.prototype in
// every Node version; toString calls them).
type FastSlices = Buffer & {
  utf8Slice(start: number, end: number): string;
  base64Slice(start: number, end: number): string;
};

/**
 * A cursor over protobuf bytes. Every read is bounded: a length or varint that runs past
 * its message's end is a ProtobufDecodeError, never a read of the next message's bytes or an
 * endless loop. Numbers are JavaScript numbers, as JSON.parse gives them: an int64 beyond
 * 2^53 is rounded the same way.
 */
export class WireReader {
  pos: number;

  constructor(
    readonly buf: Buffer,
    start = 0,
    /** The end of the bytes this reader may read. */
    readonly limit = buf.length,
  ) {
    this.pos = start;
  }

  /** An unsigned varint of up to 53 bits (tags, lengths, enums, int32 >= 0). */
  varint(): number {
    const buf = this.buf;
    let pos = this.pos;
    let byte = buf[pos++]!;
    if (byte < 0x80) {
      if (pos > this.limit) throw this.truncated('a varint');
      this.pos = pos;
      return byte;
    }
    let value = byte & 0x7f;
    let shift = 7;
    for (;;) {
      byte = buf[pos++]!;
      if (byte === undefined || pos > this.limit) throw this.truncated('a varint');
      value += shift < 28 ? (byte & 0x7f) << shift : (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) break;
      shift += 7;
      if (shift > 63) throw this.corrupt('a varint longer than 10 bytes');
    }
    this.pos = pos;
    return value;
  }

  /** A length-delimited field's length; checked against `end`. */
  length(end: number): number {
    const length = this.varint();
    if (this.pos + length > end) {
      throw this.truncated(`${length} bytes of a length-delimited field (${end - this.pos} left)`);
    }
    return length;
  }

  /** int32: negative values are sign-extended to 10 bytes on the wire. */
  int32(): number {
    return this.int64() | 0;
  }

  /** int64, two's complement. */
  int64(): number {
    const [lo, hi] = this.varint64();
    if (hi < 0x80000000) return hi * TWO_32 + lo;
    // Negative: -(2^64 - value), computed on the two halves so it rounds once.
    const negLo = (~lo + 1) >>> 0;
    const negHi = (~hi + (negLo === 0 ? 1 : 0)) >>> 0;
    return -(negHi * TWO_32 + negLo);
  }

  uint64(): number {
    const [lo, hi] = this.varint64();
    return hi * TWO_32 + lo;
  }

  double(): number {
    if (this.pos + 8 > this.limit) throw this.truncated('a fixed64');
    const value = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return value;
  }

  /** UTF-8 text of the next `length` bytes (checked by length()). */
  string(length: number): string {
    const start = this.pos;
    this.pos += length;
    return (this.buf as FastSlices).utf8Slice(start, this.pos);
  }

  /** Base64 of the next `length` bytes, as Go's encoding/json writes a []byte. */
  base64(length: number): string {
    const start = this.pos;
    this.pos += length;
    return (this.buf as FastSlices).base64Slice(start, this.pos);
  }

  /** Skips a field of an unknown number: a newer server's field, or one the table leaves out. */
  skip(wireType: number, end: number): void {
    switch (wireType) {
      case VARINT:
        this.varint64();
        return;
      case FIXED64:
        this.advance(8, end);
        return;
      case LENGTH_DELIMITED: {
        const length = this.length(end); // before reading pos: length() moves it
        this.pos += length;
        return;
      }
      case FIXED32:
        this.advance(4, end);
        return;
      default:
        throw this.corrupt(`wire type ${wireType} (groups and types 6, 7 are not used by Kubernetes)`);
    }
  }

  truncated(what: string): ProtobufDecodeError {
    return new ProtobufDecodeError(`truncated protobuf: ${what} runs past the end of its message, at byte ${this.pos}`);
  }

  corrupt(what: string): ProtobufDecodeError {
    return new ProtobufDecodeError(`corrupt protobuf at byte ${this.pos}: ${what}`);
  }

  private advance(bytes: number, end: number): void {
    if (this.pos + bytes > end) throw this.truncated(`a ${bytes * 8}-bit fixed field`);
    this.pos += bytes;
  }

  /** A varint of up to 64 bits as its low and high 32 bits. */
  private varint64(): [number, number] {
    const buf = this.buf;
    let pos = this.pos;
    let lo = 0;
    let byte: number;
    for (let shift = 0; shift < 28; shift += 7) {
      byte = buf[pos++]!;
      if (byte === undefined) throw this.truncated('a varint');
      lo |= (byte & 0x7f) << shift;
      if (byte < 0x80) return this.done(pos, lo >>> 0, 0);
    }
    // Byte 5 carries bits 28-31 of lo and 0-2 of hi.
    byte = buf[pos++]!;
    if (byte === undefined) throw this.truncated('a varint');
    lo |= (byte & 0x0f) << 28;
    let hi = (byte & 0x7f) >> 4;
    if (byte < 0x80) return this.done(pos, lo >>> 0, hi);
    for (let shift = 3; shift < 32; shift += 7) {
      byte = buf[pos++]!;
      if (byte === undefined) throw this.truncated('a varint');
      hi |= (byte & 0x7f) << shift;
      if (byte < 0x80) return this.done(pos, lo >>> 0, hi >>> 0);
    }
    throw this.corrupt('a varint longer than 10 bytes');
  }

  private done(pos: number, lo: number, hi: number): [number, number] {
    if (pos > this.limit) throw this.truncated('a varint');
    this.pos = pos;
    return [lo, hi];
  }
}
