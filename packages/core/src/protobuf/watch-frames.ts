import { decodeEnveloped, hasEnvelope, readEnvelope, type DecodedObject } from './envelope.js';
import { ObjectTooDeepError } from '../object-depth.js';
import type { ProtobufSchema } from './schema.js';
import { ProtobufDecodeError, WireReader } from './wire-reader.js';

/**
 * One watch event as the JSON stream has it. An object the decoder refused (nested past
 * MAX_OBJECT_DEPTH) comes as `refused`, with `object` holding its kind, apiVersion and
 * metadata only: the stream goes on.
 */
export interface DecodedWatchEvent {
  type: string;
  object: DecodedObject;
  refused?: ObjectTooDeepError;
}

/**
 * Splits a protobuf watch stream into its events, decoded as they arrive. The stream is
 * frames of a 4-byte big-endian length and a metav1.WatchEvent { type (1), object (2):
 * RawExtension { raw (1): an enveloped object } } (the frame itself has no envelope; one
 * with an envelope is read too). Only a frame that spans chunks is copied, once. A frame
 * longer than `maxFrameBytes` is an error, not an unbounded buffer.
 */
export class ProtobufWatchDecoder {
  /** Bytes of a frame that straddles chunks, kept (not joined) until all `needed` are in. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private needed = 0;

  constructor(
    private readonly schema: ProtobufSchema,
    private readonly maxFrameBytes = 64 * 1024 * 1024,
  ) {}

  write(chunk: Buffer): DecodedWatchEvent[] {
    let buf = chunk;
    if (this.pendingBytes > 0) {
      this.pending.push(chunk);
      this.pendingBytes += chunk.length;
      // A large frame in many chunks is joined once, when it is all there: linear in its size.
      if (this.pendingBytes < this.needed) return [];
      buf = Buffer.concat(this.pending, this.pendingBytes);
      this.pending = [];
      this.pendingBytes = 0;
    }
    const events: DecodedWatchEvent[] = [];
    let start = 0;
    this.needed = 4;
    while (buf.length - start >= 4) {
      const length = buf.readUInt32BE(start);
      if (length > this.maxFrameBytes) {
        throw new ProtobufDecodeError(`a watch frame of ${length} bytes exceeds the limit of ${this.maxFrameBytes}`);
      }
      if (buf.length - start - 4 < length) {
        this.needed = 4 + length;
        break;
      }
      events.push(this.decodeFrame(buf, start + 4, start + 4 + length));
      start += 4 + length;
    }
    if (start < buf.length) {
      this.pending.push(start === 0 ? buf : buf.subarray(start));
      this.pendingBytes = buf.length - start;
    }
    return events;
  }

  /** Bytes of a frame the stream ended in the middle of are an error; a clean end is nothing. */
  end(): undefined {
    if (this.pendingBytes > 0) {
      const bytes = this.pendingBytes;
      this.pending = [];
      this.pendingBytes = 0;
      throw new ProtobufDecodeError(`the watch stream ended inside a frame (${bytes} bytes of it arrived)`);
    }
    return undefined;
  }

  private decodeFrame(buf: Buffer, start: number, end: number): DecodedWatchEvent {
    // The API server sends the event bare; an enveloped one is read too.
    if (hasEnvelope(buf, start)) ({ rawStart: start, rawEnd: end } = readEnvelope(buf, start, end));
    const reader = new WireReader(buf, start, end);
    let type = '';
    let object: DecodedObject | undefined;
    let refused: ObjectTooDeepError | undefined;
    while (reader.pos < end) {
      const tag = reader.varint();
      if (tag === 0x0a) type = reader.string(reader.length(end));
      else if (tag === 0x12) {
        // RawExtension { raw (1) }
        const stop = reader.length(end) + reader.pos;
        while (reader.pos < stop) {
          const inner = reader.varint();
          if (inner === 0x0a) {
            const length = reader.length(stop);
            try {
              object = decodeEnveloped(this.schema, buf, reader.pos, reader.pos + length);
            } catch (error) {
              if (!(error instanceof ObjectTooDeepError)) throw error;
              refused = error;
              object = error.object as DecodedObject;
            }
            reader.pos += length;
          } else reader.skip(inner & 7, stop);
        }
        if (reader.pos !== stop) throw reader.truncated('a watch event object');
      } else reader.skip(tag & 7, end);
    }
    if (reader.pos !== end) throw reader.truncated('a watch event');
    if (!object) throw new ProtobufDecodeError(`a watch event (type ${type || 'none'}) came without an object`);
    return refused ? { type, object, refused } : { type, object };
  }
}
