const NEWLINE = 0x0a;

/**
 * Splits a byte stream into newline-delimited JSON values (the watch wire format). Lines
 * are decoded straight from the socket's chunks; only a line that spans chunks is copied,
 * once, when its end arrives. Bytes are joined before decoding, so a multi-byte character
 * split across chunks survives. A line longer than `maxLineBytes` is an error, not an
 * unbounded buffer. JSON.parse builds keys as own data properties (`__proto__` included),
 * and is not recursive in V8: no depth breaks it, so the lines are not scanned for depth
 * (a scan costs about a fifth of the parse, per event).
 */
export class JsonLineDecoder<T = unknown> {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly maxLineBytes = 64 * 1024 * 1024) {}

  /** Parses every line the chunk completes (JSON.parse once per line); keeps the tail. */
  write(chunk: Buffer): T[] {
    const values: T[] = [];
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end >= 0; end = chunk.indexOf(NEWLINE, start)) {
      if (this.pendingBytes > 0) {
        this.pending.push(chunk.subarray(start, end));
        this.parseInto(
          values,
          Buffer.concat(this.pending, this.pendingBytes + end - start),
          0,
          this.pendingBytes + end - start,
        );
        this.pending = [];
        this.pendingBytes = 0;
      } else {
        this.parseInto(values, chunk, start, end);
      }
      start = end + 1;
    }
    if (start < chunk.length) {
      this.pendingBytes += chunk.length - start;
      if (this.pendingBytes > this.maxLineBytes) {
        throw new Error(`a watch line exceeded ${this.maxLineBytes} bytes without a newline`);
      }
      this.pending.push(start === 0 ? chunk : chunk.subarray(start));
    }
    return values;
  }

  /** The value of a last line that had no newline, if any (a stream should not end so). */
  end(): T | undefined {
    if (this.pendingBytes === 0) return undefined;
    const values: T[] = [];
    this.parseInto(values, Buffer.concat(this.pending, this.pendingBytes), 0, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    return values[0];
  }

  private parseInto(values: T[], buffer: Buffer, start: number, end: number): void {
    // Skip blank lines (and a lone '\r') without decoding them.
    while (start < end && isSpace(buffer[start]!)) start++;
    if (start === end) return;
    values.push(JSON.parse(buffer.toString('utf8', start, end)) as T);
  }
}

function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0d || byte === 0x09;
}
