import { ObjectTooDeepError } from '../object-depth.js';
import { decodeObject } from './decode-message.js';
import type { MessageSpec, ProtobufSchema } from './schema.js';
import { ProtobufDecodeError, WireReader } from './wire-reader.js';

const MAGIC = [0x6b, 0x38, 0x73, 0x00] as const;

/**
 * Decodes a protobuf LIST body as it arrives, item by item: the envelope's typeMeta names
 * the list's kind, then its raw message is ListMeta (1) and the items (2), each decoded as
 * soon as its bytes are in. The body is never held whole: a list answered in one page from
 * the API server's watch cache (50,000 objects, 55 MB) costs one item's bytes at a time,
 * plus what straddles two chunks.
 */
export class ProtobufListDecoder<T = unknown> {
  /** The list's ListMeta (resourceVersion, continue, remainingItemCount), once read. */
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number } = {};
  /**
   * Items refused (nested past MAX_OBJECT_DEPTH), each naming its object: they are left out
   * of the items, and the list goes on past them.
   */
  readonly refused: ObjectTooDeepError[] = [];
  /** Bytes of a field that straddles chunks, kept until `needed` of them are in. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private needed = 0;
  private phase: 'magic' | 'envelope' | 'raw' | 'trailer' = 'magic';
  /** Bytes of the raw message not read yet. */
  private rawLeft = 0;
  private list?: MessageSpec;
  private apiVersion = '';
  private kind = '';

  constructor(private readonly schema: ProtobufSchema) {}

  /** The items this chunk completes. */
  write(chunk: Buffer): T[] {
    const items: T[] = [];
    let pos = 0;
    // A field that straddles chunks is joined from only the bytes that complete it (a large
    // object in many chunks once, when it is all there); the rest of the chunk is read in
    // place, not copied with it.
    while (this.pendingBytes > 0) {
      const missing = this.needed - this.pendingBytes;
      if (chunk.length - pos < missing) {
        this.pending.push(pos === 0 ? chunk : chunk.subarray(pos));
        this.pendingBytes += chunk.length - pos;
        return items;
      }
      this.pending.push(chunk.subarray(pos, pos + missing));
      pos += missing;
      const joined = Buffer.concat(this.pending, this.needed);
      this.pending = [];
      this.pendingBytes = 0;
      const used = this.steps(joined, 0, items);
      if (used < joined.length) {
        this.pending = [joined.subarray(used)];
        this.pendingBytes = joined.length - used;
      }
    }
    pos = this.steps(chunk, pos, items);
    if (pos < chunk.length) {
      this.pending = [chunk.subarray(pos)];
      this.pendingBytes = chunk.length - pos;
    }
    return items;
  }

  /** Reads every whole field of `buf` from `pos`; returns where the first incomplete one starts. */
  private steps(buf: Buffer, pos: number, items: T[]): number {
    for (;;) {
      const used = this.step(buf, pos, items);
      if (used === 0) return pos;
      pos += used;
    }
  }

  /** Checks the body ended where the list does. */
  end(): void {
    const done = this.phase === 'trailer' || (this.phase === 'raw' && this.rawLeft === 0);
    if (!done || this.pendingBytes > 0) {
      const left = this.pendingBytes;
      throw new ProtobufDecodeError(
        `the LIST body ended before the list did (${this.phase === 'raw' ? `${this.rawLeft} bytes of it missing` : `in its ${this.phase}`}, ${left} bytes pending)`,
      );
    }
  }

  /** Reads one field (or the magic) at `pos`; returns the bytes used, 0 when they are not all there yet. */
  private step(buf: Buffer, pos: number, items: T[]): number {
    const available = buf.length - pos;
    this.needed = available + 1; // unless said otherwise below: any more bytes
    if (this.phase === 'magic') {
      if (available < 4) return 0;
      if (MAGIC.some((byte, i) => buf[pos + i] !== byte)) {
        throw new ProtobufDecodeError(
          `not a Kubernetes protobuf list: it does not start with "k8s\\0" (first ${buf.subarray(pos, pos + 4).toString('hex')})`,
        );
      }
      this.phase = 'envelope';
      return 4;
    }
    if (this.phase === 'raw' && this.rawLeft === 0) {
      this.phase = 'trailer';
      if (!this.list) throw new ProtobufDecodeError('a protobuf list came without its typeMeta');
    }
    const head = fieldHead(buf, pos);
    if (!head) return 0;
    const { tag, length, headBytes } = head;
    const size = headBytes + length;
    if (this.phase === 'envelope' && tag === 0x12) {
      // runtime.Unknown.raw: the list's message, read field by field from here on.
      if (!this.list) throw new ProtobufDecodeError('a protobuf list came without its typeMeta');
      this.phase = 'raw';
      this.rawLeft = length;
      return headBytes;
    }
    if (this.phase === 'raw' && size > this.rawLeft) {
      throw new ProtobufDecodeError(
        `a field of ${size} bytes runs past the end of the ${this.kind} (${this.rawLeft} left)`,
      );
    }
    if (available < size) {
      this.needed = size;
      return 0;
    }
    const start = pos + headBytes;
    const end = start + length;
    if (this.phase !== 'raw') {
      if (tag === 0x0a && this.phase === 'envelope') this.typeMeta(buf, start, end);
      else if (tag === 0x1a && length > 0) throw new ProtobufDecodeError(`${this.kind} came with a content encoding`);
    } else {
      this.rawLeft -= size;
      if (tag === 0x12) {
        // `{}`, not the message's Shape: the list's reader stamps apiVersion and kind on
        // the items after the page, too late for V8 to size a Shape's objects for them.
        const item = {} as Record<string, unknown>;
        try {
          decodeObject(
            new WireReader(buf, start, end),
            end,
            this.list!.fields[2]!.message!,
            item,
            this.schema.dropManagedFields,
          );
          items.push(item as T);
        } catch (error) {
          if (!(error instanceof ObjectTooDeepError)) throw error;
          // List items come without their kind: name it after the list's.
          const kind = this.kind.endsWith('List') ? this.kind.slice(0, -4) : this.kind;
          this.refused.push(new ObjectTooDeepError({ ...error.object, apiVersion: this.apiVersion, kind }));
        }
      } else if (tag === 0x0a) {
        const metadata = {} as Record<string, unknown>;
        decodeObject(new WireReader(buf, start, end), end, this.list!.fields[1]!.message!, metadata, false);
        this.metadata = metadata;
      }
    }
    return size;
  }

  private typeMeta(buf: Buffer, start: number, end: number): void {
    const reader = new WireReader(buf, start, end);
    while (reader.pos < end) {
      const tag = reader.varint();
      if (tag === 0x0a) this.apiVersion = reader.string(reader.length(end));
      else if (tag === 0x12) this.kind = reader.string(reader.length(end));
      else reader.skip(tag & 7, end);
    }
    const list = this.schema.message(this.apiVersion, this.kind);
    if (!list?.fields[2]?.message || !list.fields[1]?.message) {
      throw new ProtobufDecodeError(
        `no protobuf schema for the list ${this.apiVersion} ${this.kind} (the table is of k8s.io/api ${this.schema.apiVersion})`,
      );
    }
    this.list = list;
  }
}

/**
 * A length-delimited field's tag and length at `pos`, or undefined when its head is not all
 * there. Every field of a list envelope and of a list is length-delimited.
 */
function fieldHead(buf: Buffer, pos: number): { tag: number; length: number; headBytes: number } | undefined {
  let at = pos;
  const varint = (): number | undefined => {
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (at >= buf.length) return undefined;
      const byte = buf[at++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
    throw new ProtobufDecodeError(`corrupt protobuf list: a varint longer than 5 bytes at byte ${at}`);
  };
  const tag = varint();
  if (tag === undefined) return undefined;
  if ((tag & 7) !== 2)
    throw new ProtobufDecodeError(`corrupt protobuf list: field ${tag >>> 3} has wire type ${tag & 7}`);
  const length = varint();
  if (length === undefined) return undefined;
  return { tag, length, headBytes: at - pos };
}
