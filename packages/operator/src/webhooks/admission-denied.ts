/**
 * Thrown by a webhook handler to deny the request. The client sees `message` after the API
 * server's prefix (`admission webhook "<name>" denied the request: `) and `code` as the
 * HTTP status (default 403 Forbidden; the API server raises a code below 400 to 400).
 */
export class AdmissionDenied extends Error {
  override readonly name = 'AdmissionDenied';
  readonly code: number;
  /** A machine-readable reason (a metav1 StatusReason such as 'Forbidden' or 'Invalid'). */
  readonly reason?: string;
  /** Warnings returned with the denial. */
  readonly warnings: string[];

  constructor(message: string, options: { code?: number; reason?: string; warnings?: string[] } = {}) {
    super(message);
    this.code = options.code ?? 403;
    if (options.reason) this.reason = options.reason;
    this.warnings = options.warnings ?? [];
  }
}
