// A source read to at most MAX_SOURCE_BYTES whatever it is: a regular file, a device
// (/dev/zero never ends), a FIFO or a process substitution (their size says nothing), stdin.
// The reading stops one byte past the cap: nothing larger is ever held.
import { open } from 'node:fs/promises';
import { CrdSourceError, MAX_SOURCE_BYTES } from './crd-documents.js';

const MIB = 1024 * 1024;

/** The text of a file, or a refusal once it passes the cap. */
export async function readBounded(path: string, origin: string, max = MAX_SOURCE_BYTES): Promise<string> {
  const file = await open(path, 'r');
  try {
    return await readAll(
      (buffer, offset, length) => file.read(buffer, offset, length).then((r) => r.bytesRead),
      origin,
      max,
    );
  } finally {
    await file.close();
  }
}

/** All of stdin, or a refusal once it passes the cap. */
export async function readStdinBounded(max = MAX_SOURCE_BYTES): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) {
      process.stdin.destroy();
      throw new CrdSourceError(`stdin: larger than ${max / MIB} MiB; is it a CRD file?`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function readAll(
  read: (buffer: Buffer, offset: number, length: number) => Promise<number>,
  origin: string,
  max: number,
): Promise<string> {
  const buffer = Buffer.allocUnsafe(Math.min(max + 1, 1 * MIB));
  const chunks: Buffer[] = [];
  let size = 0;
  for (;;) {
    const count = await read(buffer, 0, Math.min(buffer.length, max + 1 - size));
    if (count === 0) break;
    chunks.push(Buffer.from(buffer.subarray(0, count)));
    size += count;
    if (size > max) throw new CrdSourceError(`${origin}: larger than ${max / MIB} MiB; is it a CRD file?`);
  }
  return Buffer.concat(chunks).toString('utf8');
}
