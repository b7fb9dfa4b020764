// A streaming reader of .tar.gz archives, enough for envtest's: regular files taken by the
// caller's choice of name (setup-envtest flattens the archive the same way), everything
// else skipped. No dependency, nothing buffered beyond one 512-byte block, and no path
// from the archive ever reaches the file system (the caller maps each name to a base name).
import { createReadStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';

const BLOCK = 512;

/**
 * Extracts the regular files of a .tar.gz into `into`: `pick(path)` returns the file name to
 * write an entry as, or undefined to skip it. Returns the names written. Throws on a
 * damaged or truncated archive; what was written by then is the caller's to remove.
 */
export async function extractTarGz(
  archive: string,
  into: string,
  pick: (path: string) => string | undefined,
): Promise<string[]> {
  const written: string[] = [];
  let buffer: Buffer = Buffer.alloc(0);
  let remaining = 0; // data bytes of the current entry still to read
  let padding = 0; // bytes to the next block boundary after them
  let out: FileHandle | undefined;
  let collect: Buffer[] | undefined; // data of a pax header or GNU long name
  let collecting: 'pax' | 'longname' | undefined;
  let nextPath: string | undefined; // the path a pax header or long name gives the next entry
  let ended = false;

  const finishEntry = async () => {
    if (out) {
      await out.close();
      out = undefined;
    }
    if (collect) {
      const data = Buffer.concat(collect).toString('utf8');
      nextPath = collecting === 'pax' ? (paxPath(data) ?? nextPath) : data.replace(/\0.*$/s, '');
      collect = undefined;
      collecting = undefined;
    }
  };

  try {
    await pipeline(createReadStream(archive), createGunzip(), async (source: AsyncIterable<Buffer>) => {
      for await (const chunk of source) {
        buffer = buffer.length ? Buffer.concat([buffer, chunk]) : chunk;
        for (;;) {
          if (remaining > 0) {
            const take = Math.min(remaining, buffer.length);
            if (take === 0) break;
            const part = buffer.subarray(0, take);
            if (out) await out.write(part);
            else if (collect) collect.push(Buffer.from(part));
            remaining -= take;
            buffer = buffer.subarray(take);
            if (remaining > 0) break;
            await finishEntry();
            continue;
          }
          if (padding > 0) {
            const take = Math.min(padding, buffer.length);
            padding -= take;
            buffer = buffer.subarray(take);
            if (padding > 0) break;
            continue;
          }
          if (ended || buffer.length < BLOCK) break;
          const header = buffer.subarray(0, BLOCK);
          buffer = buffer.subarray(BLOCK);
          if (header.every((byte) => byte === 0)) {
            ended = true; // the end-of-archive marker; what follows is zero padding
            continue;
          }
          const entry = parseHeader(header);
          const path = nextPath ?? entry.path;
          nextPath = undefined;
          remaining = entry.size;
          padding = (BLOCK - (entry.size % BLOCK)) % BLOCK;
          if (entry.type === 'x' || entry.type === 'L') {
            collect = [];
            collecting = entry.type === 'x' ? 'pax' : 'longname';
          } else if (entry.type === '0' || entry.type === '\0') {
            const name = pick(path);
            if (name) {
              out = await open(join(into, name), 'wx', entry.mode & 0o111 ? 0o755 : 0o644);
              written.push(name);
            }
          }
          if (remaining === 0) await finishEntry();
        }
      }
      if (remaining > 0 || (!ended && buffer.length > 0)) {
        throw new Error('the archive ends in the middle of an entry (truncated)');
      }
    });
  } finally {
    await out?.close();
  }
  return written;
}

interface TarHeader {
  path: string;
  size: number;
  mode: number;
  type: string;
}

function parseHeader(block: Buffer): TarHeader {
  const text = (start: number, length: number) => {
    const field = block.subarray(start, start + length);
    const end = field.indexOf(0);
    return field.subarray(0, end === -1 ? length : end).toString('utf8');
  };
  const stored = octal(block.subarray(148, 156));
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i]!;
  if (stored !== sum) throw new Error('not a tar archive (a header checksum does not match)');
  const name = text(0, 100);
  const prefix = text(257, 6).startsWith('ustar') ? text(345, 155) : '';
  return {
    path: prefix ? `${prefix}/${name}` : name,
    size: size(block.subarray(124, 136)),
    mode: octal(block.subarray(100, 108)),
    type: String.fromCharCode(block[156]!),
  };
}

function octal(field: Buffer): number {
  const digits = field
    .toString('ascii')
    .replace(/[\0 ]+$/, '')
    .trim();
  return digits ? parseInt(digits, 8) : 0;
}

/** Sizes are octal, or base-256 (high bit set) past 8 GiB. */
function size(field: Buffer): number {
  if ((field[0]! & 0x80) === 0) return octal(field);
  let value = field[0]! & 0x7f;
  for (let i = 1; i < field.length; i++) value = value * 256 + field[i]!;
  return value;
}

/** The `path` record of a pax extended header ("<length> path=<value>\n" records). */
function paxPath(data: string): string | undefined {
  for (const record of data.split('\n')) {
    const match = /^\d+ path=(.*)$/s.exec(record);
    if (match) return match[1];
  }
  return undefined;
}
