import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as der from './der.js';

const hex = (buffer: Buffer) => buffer.toString('hex');

describe('DER', () => {
  it('encodes object identifiers: two arcs in the first byte, then base 128', () => {
    assert.equal(hex(der.oid('1.2.840.10045.4.3.2')), '06082a8648ce3d040302'); // ecdsa-with-SHA256
    assert.equal(hex(der.oid('2.5.29.17')), '0603551d11'); // subjectAltName
  });

  it('encodes non-negative integers minimally, with a zero before a high bit', () => {
    assert.equal(hex(der.unsignedInteger(Buffer.from([0, 0, 5]))), '020105');
    assert.equal(hex(der.unsignedInteger(Buffer.from([0x80]))), '02020080');
    assert.equal(hex(der.unsignedInteger(Buffer.from([0]))), '020100');
  });

  it('uses the long length form from 128 bytes', () => {
    assert.equal(hex(der.octetString(Buffer.alloc(127)).subarray(0, 2)), '047f');
    assert.equal(hex(der.octetString(Buffer.alloc(128)).subarray(0, 3)), '048180');
    assert.equal(hex(der.octetString(Buffer.alloc(300)).subarray(0, 4)), '0482012c');
  });

  it('drops trailing zero bits of named bit strings', () => {
    assert.equal(hex(der.namedBits([0])), '03020780'); // digitalSignature
    assert.equal(hex(der.namedBits([0, 5])), '03020284'); // digitalSignature, keyCertSign
    assert.equal(hex(der.namedBits([8])), '0303070080');
  });

  it('writes UTCTime through 2049 and GeneralizedTime from 2050', () => {
    assert.equal(der.time(new Date('2049-12-31T23:59:59.500Z')).subarray(2).toString(), '491231235959Z');
    assert.equal(der.time(new Date('2049-12-31T23:59:59Z'))[0], 0x17);
    assert.equal(der.time(new Date('2050-01-01T00:00:00Z')).subarray(2).toString(), '20500101000000Z');
    assert.equal(der.time(new Date('2050-01-01T00:00:00Z'))[0], 0x18);
  });
});

describe('DER reading', () => {
  it('reads back what it writes, long lengths included, and refuses truncated input', () => {
    const value = der.sequence(der.oid('2.5.29.17'), der.octetString(Buffer.alloc(300, 7)));
    const element = der.read(value);
    assert.equal(element.tag, 0x30);
    assert.equal(element.bytes.length, value.length);
    const [oid, octets] = der.children(element);
    assert.equal(hex(oid!.bytes), '0603551d11');
    assert.equal(octets!.content.length, 300);
    assert.throws(() => der.read(value.subarray(0, 10)), /truncated/);
  });
});
