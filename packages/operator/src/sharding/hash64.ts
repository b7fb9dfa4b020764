// A 64-bit string hash for ring positions, in small-integer limbs: BigInt arithmetic would
// cost several times more per key, and the ring hashes every object on every pass.
//
// FNV-1a 64 over the UTF-8 bytes, then MurmurHash3's fmix64 finaliser. Plain FNV-1a moves
// only the low ~48 bits when the last characters change (its prime is 2^40 + 0x1b3), so
// tokens `shard#1`, `shard#2`, ... would cluster on the ring; fmix64 spreads every input
// bit over all 64.

const TWO_32 = 4294967296;
/** The 64-bit result of the last hash, as [high, low] unsigned 32-bit halves. */
const out = new Uint32Array(2);

const encoder = new TextEncoder();

/**
 * FNV-1a 64 of `key`'s UTF-8 bytes into `out`, in four 16-bit limbs: every product stays
 * below 2^26, so it is all small-integer arithmetic. Kubernetes names, kinds and label
 * values are ASCII, the fast path (a char code is its byte); anything else is hashed from
 * its encoded bytes.
 */
function fnv1a64Into(key: string): void {
  // Offset basis 0xcbf29ce484222325, limbs from low to high.
  let h0 = 0x2325;
  let h1 = 0x8422;
  let h2 = 0x9ce4;
  let h3 = 0xcbf2;
  for (let i = 0; i < key.length; i++) {
    const byte = key.charCodeAt(i);
    if (byte >= 0x80) return fnv1a64BytesInto(encoder.encode(key));
    h0 ^= byte;
    // h * (2^40 + 0x1b3) mod 2^64: each limb times 0x1b3, plus h0 and h1 shifted into limbs 2 and 3 (2^40 = limb 2, bit 8).
    const t0 = h0 * 0x1b3;
    const t1 = h1 * 0x1b3 + (t0 >>> 16);
    const t2 = h2 * 0x1b3 + (h0 << 8) + (t1 >>> 16);
    h3 = (h3 * 0x1b3 + (h1 << 8) + (t2 >>> 16)) & 0xffff;
    h2 = t2 & 0xffff;
    h1 = t1 & 0xffff;
    h0 = t0 & 0xffff;
  }
  out[0] = (h3 << 16) | h2;
  out[1] = (h1 << 16) | h0;
}

/** The same over bytes, for keys that are not ASCII. */
function fnv1a64BytesInto(bytes: Uint8Array): void {
  let h0 = 0x2325;
  let h1 = 0x8422;
  let h2 = 0x9ce4;
  let h3 = 0xcbf2;
  for (const byte of bytes) {
    h0 ^= byte;
    const t0 = h0 * 0x1b3;
    const t1 = h1 * 0x1b3 + (t0 >>> 16);
    const t2 = h2 * 0x1b3 + (h0 << 8) + (t1 >>> 16);
    h3 = (h3 * 0x1b3 + (h1 << 8) + (t2 >>> 16)) & 0xffff;
    h2 = t2 & 0xffff;
    h1 = t1 & 0xffff;
    h0 = t0 & 0xffff;
  }
  out[0] = (h3 << 16) | h2;
  out[1] = (h1 << 16) | h0;
}

/** (out) * (bh, bl) mod 2^64, in place; the low halves' full product through 16-bit limbs. */
function mulInto(bh: number, bl: number): void {
  const ah = out[0]!;
  const al = out[1]!;
  const a0 = al & 0xffff;
  const a1 = al >>> 16;
  const b0 = bl & 0xffff;
  const b1 = bl >>> 16;
  const mid = a0 * b1 + a1 * b0; // < 2^33
  const low = a0 * b0 + (mid % 0x10000) * 0x10000; // < 2^33
  out[1] = low >>> 0;
  out[0] = a1 * b1 + Math.floor(mid / 0x10000) + Math.floor(low / TWO_32) + Math.imul(ah, bl) + Math.imul(al, bh);
}

/** out ^= out >>> 33. */
function xorShift33(): void {
  out[1] = out[1]! ^ (out[0]! >>> 1);
}

function fmix64(): void {
  xorShift33();
  mulInto(0xff51afd7, 0xed558ccd);
  xorShift33();
  mulInto(0xc4ceb9fe, 0x1a85ec53);
  xorShift33();
}

/**
 * The ring position of `key`: the top 53 bits of its 64-bit hash as a number, exact in a
 * double and ordered as the full hash, so positions sort and compare as plain numbers.
 */
export function ringPosition(key: string): number {
  fnv1a64Into(key);
  fmix64();
  return out[0]! * 0x200000 + (out[1]! >>> 11);
}

/**
 * The full 64-bit hash of `key` (FNV-1a 64 then fmix64), for tests and interoperability.
 * @internal
 */
export function hash64(key: string): bigint {
  fnv1a64Into(key);
  fmix64();
  return (BigInt(out[0]!) << 32n) | BigInt(out[1]!);
}

/** Plain FNV-1a 64 of `key`'s UTF-8 bytes (checked against the published test vectors). */
export function fnv1a64(key: string): bigint {
  fnv1a64Into(key);
  return (BigInt(out[0]!) << 32n) | BigInt(out[1]!);
}
