import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  admissionRefusal,
  admissionReviewResponse,
  MalformedReviewError,
  parseAdmissionReview,
} from './admission-review.js';

const request = {
  uid: '705ab4f5-6393-11e8-b7cc-42010a800002',
  kind: { group: 'test.nestor.dev', version: 'v1', kind: 'Widget' },
  resource: { group: 'test.nestor.dev', version: 'v1', resource: 'widgets' },
  name: 'w',
  namespace: 'ns',
  operation: 'CREATE',
  userInfo: { username: 'admin', groups: ['system:masters'] },
  object: { apiVersion: 'test.nestor.dev/v1', kind: 'Widget', metadata: { name: 'w' } },
  oldObject: null,
  dryRun: false,
};
const review = (r: object = request, extra: object = {}) =>
  JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: r, ...extra });

describe('parseAdmissionReview', () => {
  it('reads an AdmissionReview v1 (and v1beta1, the same shape)', () => {
    const parsed = parseAdmissionReview(review());
    assert.equal(parsed.request.uid, request.uid);
    assert.equal(parsed.request.operation, 'CREATE');
    assert.deepEqual(parsed.request.userInfo, request.userInfo);
    const beta = JSON.parse(review()) as Record<string, unknown>;
    beta.apiVersion = 'admission.k8s.io/v1beta1';
    assert.equal(parseAdmissionReview(JSON.stringify(beta)).apiVersion, 'admission.k8s.io/v1beta1');
  });

  const malformed: Array<[string, string, RegExp]> = [
    ['not JSON', '{"apiVersion": ', /not JSON/],
    ['an array', '[]', /not a JSON object/],
    ['another kind', JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap' }), /expected an AdmissionReview/],
    ['no request', JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }), /has no request/],
    ['no uid', review({ ...request, uid: undefined }), /uid is missing/],
    ['an unknown operation', review({ ...request, operation: 'PATCH' }), /operation "PATCH"/],
    ['no kind', review({ ...request, kind: undefined }), /request.kind is missing/],
    ['an object that is a string', review({ ...request, object: 'x' }), /request.object is not an object/],
    ['no object on CREATE', review({ ...request, object: null }), /object is missing on CREATE/],
    [
      'no oldObject on DELETE',
      review({ ...request, operation: 'DELETE', object: null }),
      /oldObject is missing on DELETE/,
    ],
    ['no oldObject on UPDATE', review({ ...request, operation: 'UPDATE' }), /oldObject is missing on UPDATE/],
  ];
  for (const [name, body, message] of malformed) {
    it(`refuses ${name}, saying why`, () => {
      assert.throws(
        () => parseAdmissionReview(body),
        (error: unknown) => error instanceof MalformedReviewError && message.test(error.message),
      );
    });
  }
});

describe('admissionReviewResponse', () => {
  it('echoes the apiVersion and kind of the request', () => {
    assert.deepEqual(admissionReviewResponse({ apiVersion: 'admission.k8s.io/v1beta1' }, { uid: 'u', allowed: true }), {
      apiVersion: 'admission.k8s.io/v1beta1',
      kind: 'AdmissionReview',
      response: { uid: 'u', allowed: true },
    });
  });
});

describe('parseAdmissionReview on arbitrary input', () => {
  const refusedOrParsed = (body: unknown) => {
    try {
      const parsed = parseAdmissionReview(body);
      // What it accepts is a review a handler can rely on.
      assert.equal(parsed.kind, 'AdmissionReview');
      assert.equal(typeof parsed.request.uid, 'string');
      assert.ok(['CREATE', 'UPDATE', 'DELETE', 'CONNECT'].includes(parsed.request.operation));
      assert.equal(typeof parsed.request.userInfo, 'object');
    } catch (error) {
      assert.ok(error instanceof MalformedReviewError, `threw ${String(error)}`);
      assert.ok(error.message.length > 0);
    }
  };

  it('parses or refuses with MalformedReviewError any string', () => {
    fc.assert(fc.property(fc.string({ maxLength: 200 }), refusedOrParsed), { numRuns: 300 });
  });

  it('parses or refuses with MalformedReviewError any JSON value', () => {
    fc.assert(fc.property(fc.jsonValue({ maxDepth: 4 }), refusedOrParsed), { numRuns: 300 });
  });

  it('parses or refuses reviews with any field replaced by any JSON value', () => {
    const fields = Object.keys(request);
    fc.assert(
      fc.property(fc.constantFrom(...fields), fc.jsonValue({ maxDepth: 3 }), (field, value) =>
        refusedOrParsed(review({ ...request, [field]: value })),
      ),
      { numRuns: 300 },
    );
  });
});

describe('admissionRefusal', () => {
  it('denies in the review’s own terms when its envelope was read, and gives nothing otherwise', () => {
    const envelope = { apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', uid: 'u' };
    assert.deepEqual(admissionRefusal(envelope, 'too deep'), {
      apiVersion: 'admission.k8s.io/v1beta1',
      kind: 'AdmissionReview',
      response: { uid: 'u', allowed: false, status: { code: 400, reason: 'BadRequest', message: 'too deep' } },
    });
    assert.equal(admissionRefusal({ ...envelope, uid: undefined }, 'm'), undefined);
    assert.equal(admissionRefusal({ ...envelope, apiVersion: 'v1' }, 'm'), undefined);
    assert.equal(admissionRefusal({ ...envelope, kind: 'ConversionReview' }, 'm'), undefined);
  });
});
