// A 64-bit string hash for ring positions, in 32-bit halves: BigInt arithmetic would cost
// several times more per key, and the ring hashes every object on every pass.
//
// FNV-1a 64 over the UTF-8 bytes, then MurmurHash3's fmix64 finaliser. Plain FNV-1a moves
// only the low ~48 bits when the last characters change (its prime is 2^40 + 0x1b3), so
// tokens `shard#1`, `shard#2`, ... would cluster on the ring; fmix64 spreads every input
// bit over all 64.

const TWO_32 = 4294967296;
/** The 64-bit result of the last hash, as [high, low] unsigned 32-bit halves. */
const out = new Uint32Array(2);

// The FNV state while hashing, module-level so the byte step allocates no closure.
let hi = 0;
let lo = 0;

/** One FNV-1a byte: xor, then (hi, lo) * (2^40 + 0x1b3) mod 2^64 (lo * 0x1b3 < 2^41, exact in a double). */
function step(byte: number): void {
  const t = ((lo ^ byte) >>> 0) * 0x1b3;
  hi = (Math.imul(hi, 0x1b3) + ((lo ^ byte) << 8) + Math.floor(t / TWO_32)) >>> 0;
  lo = t >>> 0;
}

/** FNV-1a 64 of `key`'s UTF-8 bytes into `out`; other than ASCII, code points are encoded inline. */
function fnv1a64Into(key: string): void {
  hi = 0xcbf29ce4; // offset basis 0xcbf29ce484222325
  lo = 0x84222325;
  for (let i = 0; i < key.length; i++) {
    let c = key.charCodeAt(i);
    if (c < 0x80) {
      step(c);
      continue;
    }
    if (c >= 0xd800 && c < 0xdc00 && i + 1 < key.length) {
      const d = key.charCodeAt(i + 1);
      if (d >= 0xdc00 && d < 0xe000) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    if (c >= 0xd800 && c < 0xe000) c = 0xfffd; // a lone surrogate, as TextEncoder encodes it
    if (c < 0x800) {
      step(0xc0 | (c >> 6));
    } else if (c < 0x10000) {
      step(0xe0 | (c >> 12));
      step(0x80 | ((c >> 6) & 0x3f));
    } else {
      step(0xf0 | (c >> 18));
      step(0x80 | ((c >> 12) & 0x3f));
      step(0x80 | ((c >> 6) & 0x3f));
    }
    step(0x80 | (c & 0x3f));
  }
  out[0] = hi;
  out[1] = lo;
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

/** The full 64-bit hash of `key` (FNV-1a 64 then fmix64), for tests and interoperability. */
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
