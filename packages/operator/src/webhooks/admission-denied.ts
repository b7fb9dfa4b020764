/**
 * Thrown by a webhook handler to deny the request. The client sees `message` after the API
 * server's prefix (`admission webhook "<name>" denied the request: `) and `code` as the
 * HTTP status (default 403 Forbidden; the API server raises a code below 400 to 400).
 * kubectl prints the reason in brackets: `Error from server (Forbidden): ...`.
 *
 * A denial is a verdict on the object, not a failure of the webhook: it is not logged.
 *
 * @example
 * throw new AdmissionDenied('spec.size must be at most 5', { code: 422 }); // reason Invalid
 */
export class AdmissionDenied extends Error {
  override readonly name = 'AdmissionDenied';
  readonly code: number;
  /**
   * A machine-readable reason (a metav1 StatusReason such as 'Forbidden' or 'Invalid').
   * Default: the API server's reason for the code (403 Forbidden, 422 Invalid, 400
   * BadRequest, 409 Conflict, ...; see `statusReasonOf`), none for a code it has none for.
   */
  readonly reason?: string;
  /** Warnings returned with the denial. */
  readonly warnings: string[];

  constructor(message: string, options: { code?: number; reason?: string; warnings?: string[] } = {}) {
    super(message);
    this.code = options.code ?? 403;
    const reason = options.reason || statusReasonOf(this.code);
    if (reason) this.reason = reason;
    this.warnings = options.warnings ?? [];
  }
}

// The reasons the API server gives these codes (apimachinery's errors.reasonForCode).
const REASONS: Readonly<Record<number, string>> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Gone',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/**
 * The metav1 StatusReason the API server gives an HTTP status code, or undefined. A code
 * below 400 is raised to 400 by the API server for a denial, so it reads as BadRequest.
 */
export function statusReasonOf(code: number): string | undefined {
  return REASONS[code < 400 ? 400 : code];
}
