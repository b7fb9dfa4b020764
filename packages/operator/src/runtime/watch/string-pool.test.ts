import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { KubeObject } from '@nestor/core';
import { StringPool } from './string-pool.js';

const metadata = fc.record(
  {
    name: fc.string(),
    namespace: fc.oneof(fc.constantFrom('ns', 'other'), fc.string({ maxLength: 80 })),
    creationTimestamp: fc.oneof(fc.constantFrom('2026-11-27T10:42:24Z'), fc.string(), fc.integer()),
    labels: fc.dictionary(fc.string({ maxLength: 10 }), fc.oneof(fc.string({ maxLength: 70 }), fc.integer()), {
      noNullPrototype: true,
    }),
    ownerReferences: fc.array(
      fc.oneof(
        fc.record(
          { apiVersion: fc.string(), kind: fc.string(), name: fc.string(), uid: fc.string() },
          { noNullPrototype: true },
        ),
        fc.constant(null),
      ),
    ),
  },
  { requiredKeys: [], noNullPrototype: true },
);

describe('StringPool', () => {
  it('leaves every object as it was, whatever its metadata holds', () => {
    const pool = new StringPool();
    fc.assert(
      fc.property(metadata, (meta) => {
        const object = { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta } as unknown as KubeObject;
        const before = structuredClone(object);
        pool.internMetadata(object);
        assert.deepEqual(object, before);
      }),
      { numRuns: 300 },
    );
  });

  it('never sets a prototype through a label named __proto__', () => {
    const labels = JSON.parse('{"__proto__": "x", "app": "web"}') as Record<string, string>;
    const object = { metadata: { name: 'a', labels } } as KubeObject;
    new StringPool().internMetadata(object);
    assert.equal(Object.getPrototypeOf(labels), Object.prototype);
    assert.deepEqual(Object.keys(labels), ['__proto__', 'app']);
  });

  it('hands back an equal string past its bound, long strings included', () => {
    const pool = new StringPool();
    for (let i = 0; i < 10_000; i++) assert.equal(pool.intern(`value-${i}`), `value-${i}`);
    const long = 'x'.repeat(200);
    assert.equal(pool.intern(long), long);
  });
});
