// The ConversionReview parser and the webhook behind it take bytes from anyone who reaches
// the webhook port: whatever they are, the answer is a review or MalformedReviewError (400).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { jsonObject, jsonValue } from '../test-support/json-arbitraries.js';
import { parseConversionReview } from './conversion-review.js';
import { ConversionWebhook } from './conversion-webhook.js';
import { HubSpokeConverter } from './hub-spoke-converter.js';
import { MalformedReviewError } from './review-envelope.js';

/** Mostly `good` (`weight` in `weight` + 2); now and then any JSON value, or none. */
const mostly = <T>(good: fc.Arbitrary<T>, weight = 8) =>
  fc.oneof(
    { arbitrary: good, weight },
    { arbitrary: jsonValue, weight: 1 },
    { arbitrary: fc.constant(undefined), weight: 1 },
  );

/** An object to convert, each field possibly wrong: names that are objects, any spec, any annotation. */
const object = fc.record({
  apiVersion: mostly(fc.constantFrom('example.com/v1', 'example.com/v2', 'other/v1')),
  kind: mostly(fc.constant('Cache')),
  metadata: mostly(
    fc.record({
      name: mostly(fc.string({ maxLength: 5 })),
      namespace: mostly(fc.string({ maxLength: 5 })),
      annotations: mostly(
        fc.record({
          'nestor.dev/conversion-data': mostly(
            fc.oneof(
              fc.string(),
              jsonObject.map((spec) => JSON.stringify({ spec })),
            ),
          ),
        }),
      ),
    }),
  ),
  spec: mostly(fc.oneof(jsonObject, fc.record({ size: mostly(fc.integer()), replicas: mostly(fc.integer()) }))),
});

/** Bodies shaped like a ConversionReview, each field possibly wrong. */
const reviewLike = fc.record({
  apiVersion: mostly(fc.constantFrom('apiextensions.k8s.io/v1', 'apiextensions.k8s.io/v1beta1'), 30),
  kind: mostly(fc.constant('ConversionReview'), 30),
  request: mostly(
    fc.record({
      uid: mostly(fc.constant('u-1'), 30),
      desiredAPIVersion: mostly(fc.constantFrom('example.com/v1', 'example.com/v2'), 30),
      objects: mostly(fc.array(mostly(object, 30), { maxLength: 3 }), 30),
    }),
    30,
  ),
});

const bodies = fc.oneof(
  { arbitrary: fc.string(), weight: 1 },
  { arbitrary: fc.json(), weight: 1 },
  { arbitrary: reviewLike.map((v) => JSON.stringify(v)), weight: 4 },
  { arbitrary: reviewLike, weight: 2 },
);

function parsedOrMalformed(body: unknown): void {
  try {
    parseConversionReview(body);
  } catch (error) {
    assert.ok(error instanceof MalformedReviewError, `not a MalformedReviewError: ${String(error)}`);
  }
}

describe('parseConversionReview (properties)', () => {
  it('parses any body or refuses it with MalformedReviewError, never another error', () => {
    fc.assert(fc.property(bodies, parsedOrMalformed), { numRuns: 400 });
  });

  it('checks what it returns: a request with a uid, a <group>/<version>, and objects with apiVersion and kind', () => {
    fc.assert(
      fc.property(reviewLike, (body) => {
        let review;
        try {
          review = parseConversionReview(JSON.stringify(body));
        } catch {
          return;
        }
        assert.equal(typeof review.request.uid, 'string');
        assert.match(review.request.desiredAPIVersion, /^[^/\s]+\/[^/\s]+$/);
        for (const object of review.request.objects) {
          assert.equal(typeof object.apiVersion, 'string');
          assert.equal(typeof object.kind, 'string');
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('ConversionWebhook.review (property)', () => {
  it('answers any body with a review that encodes to JSON, or MalformedReviewError', async () => {
    const webhook = new ConversionWebhook([
      new HubSpokeConverter({
        group: 'example.com',
        kind: 'Cache',
        hub: 'v2',
        spokes: {
          v1: {
            toHub: (spoke: { spec: { size: number } }) => ({ spec: { replicas: spoke.spec.size } }),
            fromHub: (hub: { spec: { replicas: number } }) => ({ spec: { size: Math.max(1, hub.spec.replicas) } }),
          },
        },
      }),
    ]);
    await fc.assert(
      fc.asyncProperty(bodies, async (body) => {
        try {
          const answer = await webhook.review(body);
          assert.equal(typeof JSON.stringify(answer), 'string');
          assert.ok(['Success', 'Failure'].includes(answer.response.result.status));
        } catch (error) {
          assert.ok(error instanceof MalformedReviewError, `not a MalformedReviewError: ${String(error)}`);
        }
      }),
      { numRuns: 300 },
    );
  });
});
