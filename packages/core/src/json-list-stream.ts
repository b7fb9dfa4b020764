import {
  closesContainer,
  COLON,
  isJsonSpace,
  OPEN_BRACKET,
  opensContainer,
  QUOTE,
  StreamedString,
} from './json-bytes.js';

/** The part of the body being read: the list without its items, an item, or between items. */
const enum Segment {
  Envelope,
  Item,
  Between,
}

/**
 * Decodes a JSON LIST body as it arrives, item by item, as `ProtobufListDecoder` does for
 * protobuf: each element of the top-level `items` array is parsed as soon as its last byte
 * is in, and the rest (apiVersion, kind, metadata) is parsed at the end. The body is never
 * held whole: a list answered in one page from the watch cache (100,000 custom resources,
 * 130 MB of JSON) costs one item's bytes at a time, plus what straddles two chunks, where
 * `JSON.parse` of the body needs the body, its string and the parsed list at once.
 *
 * It scans only for structure (json-bytes.ts: strings skipped natively, depth), and an
 * item's bytes go to `JSON.parse`, which says what is wrong with a malformed one.
 */
export class JsonListDecoder<T = unknown> {
  /** Open objects and arrays. */
  private depth = 0;
  private inString = false;
  private readonly string = new StreamedString();
  /** Inside the top-level `items` array. */
  private inItems = false;
  private segment = Segment.Envelope;
  /** The list without its items' contents, kept until the end. */
  private readonly envelope: Buffer[] = [];
  /** An item's bytes from chunks before this one. */
  private item: Buffer[] = [];
  /** A string at the top level as read so far (a key: `items` is the one looked for). */
  private key = '';
  /** Where that string began in this chunk (-1: not in one, or in an earlier chunk). */
  private keyStart = -1;
  /** 0: nothing; 1: the key `items` was read; 2: and its colon: a `[` opens the items. */
  private itemsKey = 0;
  private complete = false;

  /** The items this chunk completes. */
  write(chunk: Buffer): T[] {
    const items: T[] = [];
    const n = chunk.length;
    let start = 0; // where the current segment began in this chunk
    // The items wholly in this chunk, parsed together at its end: one string, one JSON.parse.
    let runStart = -1;
    let runEnd = -1;
    let i = 0;
    while (i < n) {
      if (this.segment === Segment.Item) {
        i = this.scanItem(chunk, i);
        if (this.depth !== 2) break; // the item goes on in the next chunk
        if (this.item.length > 0) {
          items.push(this.parseJoined(chunk.subarray(0, i)));
        } else {
          if (runStart < 0) runStart = start;
          runEnd = i;
        }
        this.segment = Segment.Between;
        continue;
      }
      if (this.inString) {
        i = this.skipString(chunk, i);
        continue;
      }
      const byte = chunk[i]!;
      if (byte === QUOTE) {
        this.inString = true;
        if (this.depth === 1) {
          this.key = '';
          this.keyStart = i + 1;
        }
      } else if (opensContainer(byte)) {
        if (this.inItems && this.depth === 2) {
          this.segment = Segment.Item;
          start = i;
        } else if (this.depth === 1 && this.itemsKey === 2 && byte === OPEN_BRACKET) {
          this.envelope.push(Buffer.from(chunk.subarray(start, i + 1)));
          this.inItems = true;
          this.segment = Segment.Between;
        }
        this.itemsKey = 0;
        this.depth++;
      } else if (closesContainer(byte)) {
        this.depth--;
        if (this.inItems && this.depth === 1) {
          this.inItems = false;
          this.segment = Segment.Envelope;
          start = i;
        } else if (this.depth === 0) {
          this.complete = true;
        } else if (this.depth < 0) {
          throw new SyntaxError(`the LIST body closes more than it opened, at byte ${i} of a chunk`);
        }
      } else if (byte === COLON) {
        this.itemsKey = this.itemsKey === 1 ? 2 : 0;
      } else if (!isJsonSpace(byte)) {
        this.itemsKey = 0;
      }
      i++;
    }
    if (runStart >= 0) {
      // Only commas and whitespace lie between the items of the run.
      const run = JSON.parse(`[${chunk.toString('utf8', runStart, runEnd)}]`) as T[];
      for (const item of run) items.push(item);
    }
    if (this.segment === Segment.Envelope) this.envelope.push(Buffer.from(chunk.subarray(start)));
    else if (this.segment === Segment.Item) this.item.push(start === 0 ? chunk : chunk.subarray(start));
    if (this.inString && this.keyStart >= 0) {
      // Enough to tell `items` from anything else.
      if (this.key.length < 6) this.key += chunk.toString('latin1', this.keyStart, Math.min(n, this.keyStart + 6));
      this.keyStart = 0;
    } else if (this.keyStart > 0) {
      this.keyStart = -1;
    }
    return items;
  }

  /**
   * From `i` inside an item: past the byte that closes it, or to the chunk's end. The hot
   * loop of the decoder: only strings (skipped to their closing quote) and depth matter.
   */
  private scanItem(chunk: Buffer, i: number): number {
    const n = chunk.length;
    let depth = this.depth;
    while (i < n) {
      if (this.inString) {
        i = this.skipString(chunk, i);
        continue;
      }
      const byte = chunk[i]!;
      if (byte === QUOTE) this.inString = true;
      else if (opensContainer(byte)) depth++;
      else if (closesContainer(byte) && --depth === 2) {
        i++;
        break;
      }
      i++;
    }
    this.depth = depth;
    return i;
  }

  /**
   * The list as a LIST answers it, its `items` empty: they came from write(), unless the key
   * was spelled so that the scan did not know it (`"\u0069tems"`: no API server writes it),
   * and the items were read whole here. Throws when the body ended before the list did.
   */
  end(): { apiVersion?: string; kind?: string; metadata?: Record<string, unknown>; items?: T[] | null } {
    if (!this.complete || this.inString || this.depth !== 0) {
      throw new SyntaxError('the LIST body ended before the list did');
    }
    return JSON.parse(Buffer.concat(this.envelope).toString('utf8')) as ReturnType<JsonListDecoder<T>['end']>;
  }

  /** From `i` inside a string: past its closing quote, or to the chunk's end. */
  private skipString(chunk: Buffer, i: number): number {
    const quote = this.string.close(chunk, i);
    if (quote < 0) return chunk.length;
    this.inString = false;
    if (this.depth === 1) this.endKey(chunk, quote);
    return quote + 1;
  }

  /** A top-level string ended at `quote`: is it the key `items`? */
  private endKey(chunk: Buffer, quote: number): void {
    const start = this.keyStart;
    this.keyStart = -1;
    if (start < 0) return;
    const isItems =
      this.key.length + quote - start === 5 && this.key + chunk.toString('latin1', start, quote) === 'items';
    this.key = '';
    this.itemsKey = isItems ? 1 : 0;
  }

  /** An item that began in an earlier chunk and ends with `tail`. */
  private parseJoined(tail: Buffer): T {
    this.item.push(tail);
    const bytes = Buffer.concat(this.item);
    this.item = [];
    return JSON.parse(bytes.toString('utf8')) as T;
  }
}
