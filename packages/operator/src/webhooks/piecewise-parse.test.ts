import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { JsonScanner } from './json-scanner.js';
import { parseJsonPiecewise } from './piecewise-parse.js';

/** Parsed piecewise with every container of `large` bytes or more split, as the intake does. */
async function piecewise(text: string, large = 8): Promise<unknown> {
  const bytes = Buffer.from(text);
  const scanner = new JsonScanner({ maxDepth: 1000, maxContainers: 1e9, maxValues: 1e9, largeContainerBytes: large });
  scanner.write(bytes);
  return parseJsonPiecewise(bytes, { largeContainers: scanner.largeContainers, pieceBytes: large });
}

describe('parseJsonPiecewise', () => {
  it('gives what JSON.parse gives for any JSON value, however it is split', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.jsonValue({ maxDepth: 5 }),
        fc.integer({ min: 2, max: 64 }),
        fc.boolean(),
        async (value, large, pretty) => {
          const text = JSON.stringify(value, null, pretty ? 2 : undefined);
          assert.deepEqual(await piecewise(text, large), JSON.parse(text));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps a __proto__ key as data, as JSON.parse does', async () => {
    const text = '{"spec":{"__proto__":{"polluted":true},"other":"a long enough value"}}';
    const parsed = (await piecewise(text, 4)) as { spec: Record<string, unknown> };
    assert.equal(Object.getPrototypeOf(parsed.spec), Object.prototype);
    assert.deepEqual(Object.keys(parsed.spec), ['__proto__', 'other']);
    assert.equal((parsed.spec as { polluted?: boolean }).polluted, undefined);
    assert.deepEqual(Object.getOwnPropertyDescriptor(parsed.spec, '__proto__')?.value, { polluted: true });
    assert.deepEqual(JSON.parse(JSON.stringify(parsed)), JSON.parse(text));
  });

  it('refuses what JSON.parse refuses', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: fc.constantFrom('{', '}', '[', ']', ',', ':', '"a"', '1', ' ', 'null'), maxLength: 30 }),
        async (text) => {
          let expected: unknown;
          let valid = true;
          try {
            expected = JSON.parse(text);
          } catch {
            valid = false;
          }
          if (valid) assert.deepEqual(await piecewise(text, 2), expected);
          else await assert.rejects(piecewise(text, 2), SyntaxError);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('lets the event loop turn while a large body is parsed', async () => {
    const text = JSON.stringify({
      items: Array.from({ length: 40_000 }, (_, i) => ({ name: `item-${i}`, value: 'x'.repeat(40) })),
    });
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    try {
      const parsed = await piecewise(text, 64 * 1024);
      assert.deepEqual(parsed, JSON.parse(text));
    } finally {
      clearInterval(ticker);
    }
    assert.ok(turns > 0, 'no timer ran during the parse');
  });
});
