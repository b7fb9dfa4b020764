import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { JsonScanner, ReviewLimitError } from './json-scanner.js';
import { MalformedReviewError } from './review-envelope.js';

const limits = { maxDepth: 1000, maxContainers: 250_000, largeContainerBytes: 64 };

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
    assert.deepEqual(scanner.stats, { containers: 9, depth: 6 });
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

  it('counts the depth and containers of any JSON value as JSON.parse sees them', () => {
    const measure = (value: unknown, depth = 0): { containers: number; depth: number } => {
      if (typeof value !== 'object' || value === null) return { containers: 0, depth };
      const children = Object.values(value as object).map((child) => measure(child, depth + 1));
      return {
        containers: 1 + children.reduce((sum, child) => sum + child.containers, 0),
        depth: Math.max(depth + 1, ...children.map((child) => child.depth)),
      };
    };
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        const text = JSON.stringify(value);
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
