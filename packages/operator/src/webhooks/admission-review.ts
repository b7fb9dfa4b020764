// The AdmissionReview wire format (admission.k8s.io/v1, kubernetes/api admission/v1/types.go):
// reading a request without trusting it, and the response the API server accepts.
import type { ReviewEnvelopeFields } from './json-scanner.js';
import { isRecord, MalformedReviewError, readReviewEnvelope, shown } from './review-envelope.js';

/** The operation an admission review is about. */
export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

const OPERATIONS: readonly string[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];

/** The versions read: v1beta1 has the same shape, and the response echoes the request's. */
const API_VERSIONS: readonly string[] = ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1'];

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

/** Who sent the request an admission review is about. */
export interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface AdmissionRequest<T = unknown> {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  requestKind?: GroupVersionKind;
  requestResource?: GroupVersionResource;
  requestSubResource?: string;
  /** '' when the object is created with generateName. */
  name?: string;
  namespace?: string;
  operation: AdmissionOperation;
  userInfo: UserInfo;
  /** The new object; null on DELETE. */
  object?: T | null;
  /** The stored object, on UPDATE and DELETE. */
  oldObject?: T | null;
  dryRun?: boolean;
  /** CreateOptions, UpdateOptions or DeleteOptions. */
  options?: Record<string, unknown> | null;
}

export interface AdmissionReview<T = unknown> {
  apiVersion: string;
  kind: 'AdmissionReview';
  request: AdmissionRequest<T>;
}

export interface AdmissionStatus {
  code: number;
  message: string;
  reason?: string;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: AdmissionStatus;
  warnings?: string[];
  patchType?: 'JSONPatch';
  /** base64 of the JSON Patch. */
  patch?: string;
}

export { MalformedReviewError };

/**
 * The review in `body` (JSON text, or already parsed), checked field by field so a handler
 * never sees a malformed request; throws MalformedReviewError saying what is wrong.
 */
export function parseAdmissionReview(body: unknown): AdmissionReview {
  const { apiVersion, request } = readReviewEnvelope(body, 'AdmissionReview', API_VERSIONS);
  if (typeof request.operation !== 'string' || !OPERATIONS.includes(request.operation)) {
    throw new MalformedReviewError(
      `request.operation ${shown(request.operation)} is not one of ${OPERATIONS.join(', ')}`,
    );
  }
  for (const field of ['kind', 'resource'] as const) {
    if (!isRecord(request[field])) throw new MalformedReviewError(`request.${field} is missing`);
  }
  for (const field of ['object', 'oldObject'] as const) {
    const object = request[field];
    if (object !== undefined && object !== null && !isRecord(object)) {
      throw new MalformedReviewError(`request.${field} is not an object`);
    }
  }
  if (request.operation !== 'DELETE' && request.operation !== 'CONNECT' && !isRecord(request.object)) {
    throw new MalformedReviewError(`request.object is missing on ${request.operation}`);
  }
  if (request.operation === 'DELETE' && !isRecord(request.oldObject)) {
    throw new MalformedReviewError('request.oldObject is missing on DELETE');
  }
  if (request.operation === 'UPDATE' && !isRecord(request.oldObject)) {
    throw new MalformedReviewError('request.oldObject is missing on UPDATE');
  }
  return {
    apiVersion,
    kind: 'AdmissionReview',
    request: {
      ...request,
      userInfo: isRecord(request.userInfo) ? request.userInfo : {},
    } as unknown as AdmissionRequest,
  };
}

/** The answer: the request's apiVersion and kind, its uid, always sent with HTTP 200. */
export function admissionReviewResponse(
  review: Pick<AdmissionReview, 'apiVersion'>,
  response: AdmissionResponse,
): { apiVersion: string; kind: 'AdmissionReview'; response: AdmissionResponse } {
  return { apiVersion: review.apiVersion, kind: 'AdmissionReview', response };
}

/**
 * The denial of a review refused unparsed (too deep, too many containers), from what the
 * scanner read of its envelope; undefined when that is not an AdmissionReview this parser
 * reads (then the server answers 400).
 */
export function admissionRefusal(
  { apiVersion, kind, uid }: ReviewEnvelopeFields,
  message: string,
): ReturnType<typeof admissionReviewResponse> | undefined {
  if (kind !== 'AdmissionReview' || !uid || !apiVersion || !API_VERSIONS.includes(apiVersion)) return undefined;
  return admissionReviewResponse(
    { apiVersion },
    { uid, allowed: false, status: { code: 400, reason: 'BadRequest', message } },
  );
}
