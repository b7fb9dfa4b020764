// The ConversionReview wire format (apiextensions.k8s.io/v1, kubernetes/apiextensions-apiserver
// pkg/apis/apiextensions/v1/types.go): reading a request without trusting it, and the
// response the API server accepts (always HTTP 200; a failure is `result.status: Failure`).
import type { ReviewEnvelopeFields } from './json-scanner.js';
import { isRecord, MalformedReviewError, readReviewEnvelope, shown } from './review-envelope.js';

/** v1 is what the CRDs declare (`conversionReviewVersions: ['v1']`); v1beta1 has the same shape. */
const API_VERSIONS: readonly string[] = ['apiextensions.k8s.io/v1', 'apiextensions.k8s.io/v1beta1'];

/** An object as the API server sends it for conversion: any custom resource. */
export interface ConvertibleObject {
  apiVersion: string;
  kind: string;
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

export interface ConversionRequest {
  uid: string;
  /** `<group>/<version>` every object must be converted to. */
  desiredAPIVersion: string;
  objects: ConvertibleObject[];
}

export interface ConversionReview {
  apiVersion: string;
  kind: 'ConversionReview';
  request: ConversionRequest;
}

export interface ConversionResult {
  status: 'Success' | 'Failure';
  /** Why it failed: the API server puts it in the error the client sees. */
  message?: string;
}

export interface ConversionResponse {
  uid: string;
  /** Same count and order as the request's objects, each at the desired apiVersion. */
  convertedObjects: ConvertibleObject[];
  result: ConversionResult;
}

export interface ConversionReviewResponse {
  apiVersion: string;
  kind: 'ConversionReview';
  response: ConversionResponse;
}

/**
 * The review in `body` (a JSON string, or already parsed), checked field by field so a
 * converter never sees a malformed request; throws MalformedReviewError (answer 400) saying
 * what is wrong.
 */
export function parseConversionReview(body: string | unknown): ConversionReview {
  const { apiVersion, request } = readReviewEnvelope(body, 'ConversionReview', API_VERSIONS);
  const desired = request.desiredAPIVersion;
  if (typeof desired !== 'string' || !/^[^/\s]+\/[^/\s]+$/.test(desired)) {
    throw new MalformedReviewError(
      `request.desiredAPIVersion ${shown(desired)} is not <group>/<version>: custom resources always have a group`,
    );
  }
  if (!Array.isArray(request.objects)) throw new MalformedReviewError('request.objects is not a list');
  request.objects.forEach((object: unknown, i) => {
    if (!isRecord(object)) throw new MalformedReviewError(`request.objects[${i}] is not an object`);
    for (const field of ['apiVersion', 'kind'] as const) {
      if (typeof object[field] !== 'string' || object[field] === '') {
        throw new MalformedReviewError(`request.objects[${i}].${field} is missing`);
      }
    }
    if (object.metadata !== undefined && !isRecord(object.metadata)) {
      throw new MalformedReviewError(`request.objects[${i}].metadata is not an object`);
    }
  });
  return {
    apiVersion,
    kind: 'ConversionReview',
    request: { uid: request.uid, desiredAPIVersion: desired, objects: request.objects as ConvertibleObject[] },
  };
}

/** The answer: the request's apiVersion and kind, sent with HTTP 200 whatever the result. */
export function conversionReviewResponse(
  review: Pick<ConversionReview, 'apiVersion'>,
  response: ConversionResponse,
): ConversionReviewResponse {
  return { apiVersion: review.apiVersion, kind: 'ConversionReview', response };
}

/**
 * The `Failure` of a review refused unparsed (too deep, too many containers), from what the
 * scanner read of its envelope; undefined when that is not a ConversionReview this parser
 * reads (then the server answers 400).
 */
export function conversionRefusal(
  { apiVersion, kind, uid }: ReviewEnvelopeFields,
  message: string,
): ConversionReviewResponse | undefined {
  if (kind !== 'ConversionReview' || !uid || !apiVersion || !API_VERSIONS.includes(apiVersion)) return undefined;
  return conversionReviewResponse(
    { apiVersion },
    { uid, convertedObjects: [], result: { status: 'Failure', message } },
  );
}
