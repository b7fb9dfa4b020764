import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_OBJECT_DEPTH } from '@nestor/core';
import fc from 'fast-check';
import {
  applyMergePatch,
  CONVERSION_DATA_ANNOTATION,
  jsonEqual,
  mergePatch,
  nestsDeeperThan,
  readConversionData,
  splitPatch,
} from './conversion-data.js';
import { jsonObject, jsonValue, withoutNullFields } from '../test-support/json-arbitraries.js';

describe('conversion data merge patches (properties)', () => {
  it('applying mergePatch(a, b) to a gives b, for JSON values with any keys, __proto__ included', () => {
    fc.assert(
      fc.property(jsonValue, jsonValue.map(withoutNullFields), (a, b) => {
        const patch = mergePatch(a, b);
        const result = patch === undefined ? a : applyMergePatch(a, patch);
        // Strict: same own keys and same prototypes, so a __proto__ key stayed a key.
        assert.deepStrictEqual(result, b);
        assert.ok(jsonEqual(result, b));
      }),
      { numRuns: 300 },
    );
  });

  it('changes neither argument', () => {
    fc.assert(
      fc.property(jsonObject, jsonObject.map(withoutNullFields), (a, b) => {
        const [aText, bText] = [JSON.stringify(a), JSON.stringify(b)];
        const patch = mergePatch(a, b);
        if (patch !== undefined) applyMergePatch(a, patch);
        assert.equal(JSON.stringify(a), aText);
        assert.equal(JSON.stringify(b), bText);
      }),
      { numRuns: 200 },
    );
  });

  it('the two halves of a split patch, applied in turn, do what the whole does', () => {
    fc.assert(
      fc.property(jsonObject, jsonObject, (target, patch) => {
        const halves = splitPatch(patch);
        if (!halves) return;
        const inTurn = applyMergePatch(applyMergePatch(target, halves[0]), halves[1]);
        assert.deepStrictEqual(inTurn, applyMergePatch(target, patch));
      }),
      { numRuns: 300 },
    );
  });
});

describe('conversion data', () => {
  it('keeps __proto__ as a key: compared, diffed and applied as data, never as a prototype', () => {
    const polluted = JSON.parse('{"__proto__": {"x": true}}') as Record<string, unknown>;
    assert.equal(jsonEqual(polluted, { y: {} }), false);
    assert.equal(jsonEqual(JSON.parse('{"__proto__": {}}'), { x: 1 }), false);
    const patch = mergePatch({}, polluted) as Record<string, unknown>;
    assert.ok(Object.hasOwn(patch, '__proto__'));
    const applied = applyMergePatch({ a: 1 }, patch) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(applied), Object.prototype);
    assert.equal(applied['x'], undefined, 'no field appears from a prototype');
    assert.equal(JSON.stringify(applied), '{"a":1,"__proto__":{"x":true}}');
    // A key the target lacks is not read from its prototype (here: Object.prototype.constructor).
    assert.deepEqual(mergePatch({}, { constructor: { a: 1 } }), { constructor: { a: 1 } });
  });

  it('reads the annotation, or says why it is ignored: too large, not JSON, not an object, too deep', () => {
    const on = (text: string) => ({ metadata: { annotations: { [CONVERSION_DATA_ANNOTATION]: text } } });
    assert.deepEqual(readConversionData(on('{"spec":{"a":1}}')), { patch: { spec: { a: 1 } } });
    assert.equal(readConversionData({ metadata: {} }), undefined);
    const ignored = (text: string, max?: number) => {
      const data = readConversionData(on(text), max);
      return data && 'ignored' in data ? data.ignored : undefined;
    };
    assert.equal(
      ignored('{"spec":{"a":"é"}}', 18),
      `its ${CONVERSION_DATA_ANNOTATION} annotation is 19 bytes, over the limit of 18`,
      'counted in bytes of UTF-8',
    );
    assert.match(ignored('{"spec":') ?? '', /annotation is not JSON$/);
    assert.match(ignored('[1]') ?? '', /annotation is not a JSON object$/);
    const deep = `${'{"a":'.repeat(MAX_OBJECT_DEPTH)}1${'}'.repeat(MAX_OBJECT_DEPTH)}`;
    assert.deepEqual(readConversionData(on(deep), 1e6) && 'patch' in readConversionData(on(deep), 1e6)!, true);
    assert.match(ignored(`{"b":${deep}}`, 1e6) ?? '', new RegExp(`nests deeper than ${MAX_OBJECT_DEPTH} levels$`));
  });

  it('measures depth without recursion, at any depth', () => {
    const deep = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`) as unknown;
    assert.equal(nestsDeeperThan(deep, MAX_OBJECT_DEPTH), true);
    assert.equal(nestsDeeperThan({ a: [{}] }, 3), false);
    assert.equal(nestsDeeperThan({ a: [{}] }, 2), true);
    assert.equal(nestsDeeperThan('text', 0), false);
    // Against the recursive definition: objects and arrays count one level each.
    const depthOf = (value: unknown): number =>
      typeof value === 'object' && value !== null ? 1 + Math.max(0, ...Object.values(value).map(depthOf)) : 0;
    fc.assert(
      fc.property(jsonValue, fc.integer({ min: 0, max: 6 }), (value, limit) => {
        assert.equal(nestsDeeperThan(value, limit), depthOf(value) > limit);
      }),
      { numRuns: 300 },
    );
  });
});
