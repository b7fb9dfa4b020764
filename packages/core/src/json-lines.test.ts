import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JsonLineDecoder } from './json-lines.js';
import { cutAt } from './test-support/cut-at.js';

/** Feeds `bytes` cut at the given offsets and returns every value decoded. */
function decodeCut(bytes: Buffer, cuts: number[]): unknown[] {
  const decoder = new JsonLineDecoder();
  const values: unknown[] = cutAt(bytes, cuts).flatMap((chunk) => decoder.write(chunk));
  const last = decoder.end();
  if (last !== undefined) values.push(last);
  return values;
}

describe('JsonLineDecoder', () => {
  const events = [
    { type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '1' } } },
    { type: 'MODIFIED', object: { metadata: { name: 'ünïcødé-✓', resourceVersion: '2' }, data: { k: 'v🙂' } } },
    { type: 'BOOKMARK', object: { metadata: { resourceVersion: '3' } } },
  ];
  const wire = Buffer.from(events.map((e) => JSON.stringify(e) + '\n').join(''));

  it('decodes the same values whatever byte a chunk boundary falls on', () => {
    for (let cut = 0; cut <= wire.length; cut++) {
      assert.deepEqual(decodeCut(wire, [cut]), events, `cut at byte ${cut}`);
    }
  });

  it('joins a line spread over many chunks, multi-byte characters split included', () => {
    const everyByte = Array.from({ length: wire.length - 1 }, (_, i) => i + 1);
    assert.deepEqual(decodeCut(wire, everyByte), events);
  });

  it('decodes several lines from one chunk and skips blank lines and CRLF endings', () => {
    const decoder = new JsonLineDecoder();
    assert.deepEqual(decoder.write(Buffer.from('{"a":1}\r\n\n  \n{"b":2}\n{"c"')), [{ a: 1 }, { b: 2 }]);
    assert.deepEqual(decoder.write(Buffer.from(':3}\n')), [{ c: 3 }]);
    assert.equal(decoder.end(), undefined);
  });

  it('returns a last line that had no newline at the end of the stream', () => {
    const decoder = new JsonLineDecoder();
    assert.deepEqual(decoder.write(Buffer.from('{"a":1}\n{"b"')), [{ a: 1 }]);
    assert.deepEqual(decoder.write(Buffer.from(':2}')), []);
    assert.deepEqual(decoder.end(), { b: 2 });
  });

  it('bounds the bytes it buffers for one line', () => {
    const decoder = new JsonLineDecoder(16);
    decoder.write(Buffer.from('{"a":"0123'));
    assert.throws(() => decoder.write(Buffer.from('456789abcdef')), /exceeded 16 bytes/);
  });

  it('throws on a malformed line', () => {
    assert.throws(() => new JsonLineDecoder().write(Buffer.from('{"a":\n')), SyntaxError);
  });
});
