// What AdmissionReview and ConversionReview share on the wire: a JSON object of a known
// kind and apiVersion with a `request` that carries a uid. Each parser checks the rest.

/** A body that is not the review the path serves: answered with HTTP 400 and this message. */
export class MalformedReviewError extends Error {
  override readonly name: string = 'MalformedReviewError';
}

/** The review's apiVersion and its request, checked up to the request's uid. */
export function readReviewEnvelope(
  body: unknown,
  kind: 'AdmissionReview' | 'ConversionReview',
  apiVersions: readonly string[],
): { apiVersion: string; request: Record<string, unknown> & { uid: string } } {
  let value: unknown = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch (error) {
      throw new MalformedReviewError(`the body is not JSON: ${(error as Error).message}`);
    }
  }
  if (!isRecord(value)) throw new MalformedReviewError('the body is not a JSON object');
  if (value.kind !== kind || typeof value.apiVersion !== 'string' || !apiVersions.includes(value.apiVersion)) {
    throw new MalformedReviewError(
      `expected ${kind === 'AdmissionReview' ? 'an' : 'a'} ${kind} of ${apiVersions.join(' or ')}, got kind ${shown(value.kind)} apiVersion ${shown(value.apiVersion)}`,
    );
  }
  const request = value.request;
  if (!isRecord(request)) throw new MalformedReviewError(`the ${kind} has no request`);
  if (typeof request.uid !== 'string' || request.uid === '') throw new MalformedReviewError('request.uid is missing');
  return { apiVersion: value.apiVersion, request: request as Record<string, unknown> & { uid: string } };
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value from the request for a message: a string quoted and cut short, anything else by its type. */
export function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 100 ? `${value.slice(0, 100)}...` : value);
  if (value === undefined || value === null) return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
