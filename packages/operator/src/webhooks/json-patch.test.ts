import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonPatch, type JsonPatchOperation, type JsonValue } from './json-patch.js';

/** RFC 6902 apply, for add/remove/replace: what the API server does with the patch. */
function apply(document: unknown, operations: JsonPatchOperation[]): unknown {
  let root = structuredClone(document) as JsonValue;
  for (const operation of operations) {
    if (operation.path === '') {
      root = operation.op === 'remove' ? null : operation.value;
      continue;
    }
    const segments = operation.path
      .slice(1)
      .split('/')
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = segments.pop()!;
    let parent = root as Record<string, JsonValue> | JsonValue[];
    for (const segment of segments) parent = (parent as Record<string, JsonValue>)[segment] as typeof parent;
    if (Array.isArray(parent)) {
      const index = last === '-' ? parent.length : Number(last);
      assert.ok(index >= 0 && index <= parent.length, `index ${last} in range for ${operation.op}`);
      if (operation.op === 'add') parent.splice(index, 0, operation.value);
      else if (operation.op === 'remove') parent.splice(index, 1);
      else parent[index] = operation.value;
    } else {
      if (operation.op !== 'add')
        assert.ok(Object.hasOwn(parent, last), `${operation.path} exists for ${operation.op}`);
      if (operation.op === 'remove') delete parent[last];
      else parent[last] = operation.value;
    }
  }
  return root;
}

const cases: Array<[string, unknown, unknown]> = [
  ['no change', { a: 1, b: [1, 2] }, { a: 1, b: [1, 2] }],
  ['an added field', { spec: {} }, { spec: { size: 3 } }],
  ['a nested object added', { metadata: { name: 'x' } }, { metadata: { name: 'x', labels: { app: 'y' } } }],
  ['a removed field', { spec: { a: 1, b: 2 } }, { spec: { a: 1 } }],
  ['a replaced value', { spec: { size: 1 } }, { spec: { size: 3 } }],
  ['a type change', { spec: { v: [1] } }, { spec: { v: { x: 1 } } }],
  ['null to object', { spec: null }, { spec: { a: 1 } }],
  ['an array grown', { l: [1, 2] }, { l: [1, 2, 3, 4] }],
  ['an array shrunk', { l: [1, 2, 3, 4] }, { l: [1] }],
  ['array elements changed in place', { l: [{ a: 1 }, { a: 2 }] }, { l: [{ a: 1, b: 1 }, { a: 3 }] }],
  ['keys needing escapes', { m: { 'a/b': 1, 'c~d': 2 } }, { m: { 'a/b': 2, 'e/~f': 3 } }],
  ['the whole document', [1], { a: 1 }],
  ['annotations with dotted keys', { metadata: {} }, { metadata: { annotations: { 'example.com/x': 'y' } } }],
];

describe('jsonPatch', () => {
  for (const [name, from, to] of cases) {
    it(`turns the old document into the new one: ${name}`, () => {
      assert.deepEqual(apply(from, jsonPatch(from, to)), to);
    });
  }

  it('writes nothing for what did not change, and only the leaves that did', () => {
    assert.deepEqual(jsonPatch({ a: { b: [1, { c: 2 }] } }, { a: { b: [1, { c: 2 }] } }), []);
    assert.deepEqual(jsonPatch({ spec: { size: 1, mode: 'x' } }, { spec: { size: 3, mode: 'x' } }), [
      { op: 'replace', path: '/spec/size', value: 3 },
    ]);
  });

  it('escapes ~ and / in keys as RFC 6901 says', () => {
    assert.deepEqual(jsonPatch({}, { 'a/b~c': 1 }), [{ op: 'add', path: '/a~1b~0c', value: 1 }]);
  });

  it('removes array tails from the end, so each index is valid when applied', () => {
    assert.deepEqual(jsonPatch([1, 2, 3], [1]), [
      { op: 'remove', path: '/2' },
      { op: 'remove', path: '/1' },
    ]);
  });

  it('treats an undefined property as absent, as JSON does', () => {
    assert.deepEqual(jsonPatch({ a: 1 }, { a: 1, b: undefined }), []);
    assert.deepEqual(jsonPatch({ a: 1 }, { a: undefined }), [{ op: 'remove', path: '/a' }]);
  });
});
