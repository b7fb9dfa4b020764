/** `bytes` cut at `offsets` (ascending, within it): the chunks a stream would hand a decoder. */
export function cutAt(bytes: Buffer, offsets: readonly number[]): Buffer[] {
  const chunks: Buffer[] = [];
  let start = 0;
  for (const offset of [...offsets, bytes.length]) {
    chunks.push(bytes.subarray(start, offset));
    start = offset;
  }
  return chunks;
}
