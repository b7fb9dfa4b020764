import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { JsonScanner, ReviewLimitError } from './json-scanner.js';
import { MalformedReviewError } from './review-envelope.js';

const limits = { maxDepth: 1000, maxContainers: 250_000, maxValues: 1_000_000, largeContainerBytes: 64 };

function scan(text: string, chunkSizes: number[] = [], options = limits): JsonScanner {
  const scanner = new JsonScanner(options);
  const bytes = Buffer.from(text);
  let at = 0;
  for (const size of chunkSizes) {
    if (at >= bytes.length) break;
    scanner.write(bytes.subarray(at, at + size));
    at += size;
  }
  scanner.write(bytes.subarray(at));
  return scanner;
}

const review = JSON.stringify({
  kind: 'AdmissionReview',
  apiVersion: 'admission.k8s.io/v1',
  request: {
    uid: 'abc-123',
    object: { metadata: { uid: 'not-this-one', name: 'w' }, spec: { list: [{ a: '}]"\\' }, [], {}] } },
  },
});

describe('JsonScanner', () => {
  it('reads the envelope: kind, apiVersion and request.uid, not a uid deeper down', () => {
    const scanner = scan(review);
    assert.deepEqual(scanner.envelope, { kind: 'AdmissionReview', apiVersion: 'admission.k8s.io/v1', uid: 'abc-123' });
    // Values: 3 at the top, 2 in request, 2 in object, 2 in metadata, 2 in spec, 3 in list, 1 in {a}; each key counts too.
    assert.deepEqual(scanner.stats, { containers: 9, values: 2 * 3 + 2 * 2 + 2 * 2 + 2 * 2 + 2 + 3 + 2, depth: 6 });
  });

  it('refuses nesting past the limit, naming it, with the envelope read before it', () => {
    const deep = `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u1","object":${'['.repeat(2000)}${']'.repeat(2000)}}}`;
    const scanner = new JsonScanner(limits);
    assert.throws(
      () => scanner.write(Buffer.from(deep)),
      (error: unknown) =>
        error instanceof ReviewLimitError &&
        error instanceof MalformedReviewError &&
        /more than 1000 deep/.test(error.message),
    );
    assert.equal(scanner.envelope.uid, 'u1');
  });

  it('refuses more objects and arrays than the limit, before they are parsed', () => {
    const many = `{"request":{"object":[${'[],'.repeat(100)}[]]}}`;
    assert.throws(() => scan(many, [], { ...limits, maxContainers: 50 }), /more than 50 objects and arrays/);
  });

  it('refuses more values and keys than the limit, whatever their type, before they are parsed', () => {
    const numbers = `{"request":{"object":[${'1,'.repeat(100)}1]}}`;
    assert.throws(() => scan(numbers, [], { ...limits, maxValues: 50 }), /more than 50 values and keys/);
    const keys = `{"request":{"object":{${Array.from({ length: 40 }, (_, i) => `"k${i}":null`).join(',')}}}}`;
    assert.throws(() => scan(keys, [7, 3], { ...limits, maxValues: 50 }), /more than 50 values and keys/);
    assert.equal(scan(keys, [], { ...limits, maxValues: 84 }).stats.values, 2 + 2 + 80);
  });

  it('gives the same result however the bytes are split into chunks', () => {
    const whole = scan(review);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 30 }), (sizes) => {
        const chunked = scan(review, sizes);
        assert.deepEqual(chunked.envelope, whole.envelope);
        assert.deepEqual(chunked.stats, whole.stats);
        assert.deepEqual([...chunked.largeContainers], [...whole.largeContainers]);
      }),
      { numRuns: 200 },
    );
  });

  it('counts the depth, containers, values and keys of any JSON value as JSON.parse sees them', () => {
    type Stats = { containers: number; values: number; depth: number };
    const measure = (value: unknown, depth = 0): Stats => {
      if (typeof value !== 'object' || value === null) return { containers: 0, values: 0, depth };
      const members = Object.values(value as object);
      const children = members.map((child) => measure(child, depth + 1));
      return {
        containers: 1 + children.reduce((sum, child) => sum + child.containers, 0),
        // An element counts once; an object's member twice, its key and its value.
        values:
          members.length * (Array.isArray(value) ? 1 : 2) + children.reduce((sum, child) => sum + child.values, 0),
        depth: Math.max(depth + 1, ...children.map((child) => child.depth)),
      };
    };
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.boolean(), (value, pretty) => {
        const text = JSON.stringify(value, null, pretty ? 2 : undefined);
        assert.deepEqual(scan(text).stats, measure(JSON.parse(text)));
      }),
      { numRuns: 300 },
    );
  });

  it('never throws anything but its limit error on arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), (bytes) => {
        try {
          new JsonScanner({ ...limits, maxDepth: 8, maxContainers: 40 }).write(bytes);
        } catch (error) {
          assert.ok(error instanceof ReviewLimitError, String(error));
        }
      }),
      { numRuns: 300 },
    );
  });
});
