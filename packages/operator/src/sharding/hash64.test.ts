import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seededRandom } from '@nestor/core';
import { fnv1a64, hash64, ringPosition } from './hash64.js';

const MASK = (1n << 64n) - 1n;

/** The reference: FNV-1a 64 then fmix64 in BigInt, straight from the definitions. */
function reference(key: string): bigint {
  let h = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(key)) h = ((h ^ BigInt(byte)) * 0x100000001b3n) & MASK;
  h ^= h >> 33n;
  h = (h * 0xff51afd7ed558ccdn) & MASK;
  h ^= h >> 33n;
  h = (h * 0xc4ceb9fe1a85ec53n) & MASK;
  h ^= h >> 33n;
  return h;
}

describe('hash64', () => {
  it('computes FNV-1a 64 as its published test vectors', () => {
    assert.equal(fnv1a64(''), 0xcbf29ce484222325n);
    assert.equal(fnv1a64('a'), 0xaf63dc4c8601ec8cn);
    assert.equal(fnv1a64('foobar'), 0x85944171f73967e8n);
  });

  it('matches a BigInt reference on random ASCII and non-ASCII keys', () => {
    const random = seededRandom(17);
    const alphabet = 'abcXYZ019./-#_é€😀\u0800\uffff';
    for (let n = 0; n < 2000; n++) {
      const chars = Array.from(alphabet);
      let key = '';
      const length = Math.floor(random() * 60);
      for (let i = 0; i < length; i++) key += chars[Math.floor(random() * chars.length)];
      assert.equal(hash64(key), reference(key), `key ${JSON.stringify(key)}`);
    }
  });

  it('encodes a lone surrogate as U+FFFD, as TextEncoder does', () => {
    assert.equal(hash64('a\ud800b'), reference('a\ud800b'));
    assert.equal(hash64('\udc00'), reference('\udc00'));
  });

  it('gives the ring position as the top 53 bits of the hash', () => {
    for (const key of ['', 'shard-0#1', 'apps/Deployment/default/web']) {
      assert.equal(ringPosition(key), Number(hash64(key) >> 11n));
    }
  });
});
