/** The meta/v1 Status object the API server sends with a failure (and in watch ERROR events). */
export interface KubeStatus {
  kind?: string;
  apiVersion?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  /** A 410 for an expired continue token carries the token to go on from (an inconsistent list). */
  metadata?: { continue?: string };
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    retryAfterSeconds?: number;
    causes?: Array<{ reason?: string; message?: string; field?: string }>;
  };
}

/** The request a failure belongs to. */
export interface FailedRequest {
  method: string;
  path: string;
  /** A WATCH is a GET with ?watch=true: RBAC calls its verb 'watch'. */
  watch?: boolean;
}

const NETWORK_REASON: Record<string, string> = {
  ECONNREFUSED: 'Unreachable',
  EHOSTUNREACH: 'Unreachable',
  ENETUNREACH: 'Unreachable',
  ENOTFOUND: 'Unreachable',
  EAI_AGAIN: 'Unreachable',
  ETIMEDOUT: 'Timeout',
};

/**
 * A failed call to the API server: an HTTP status >= 400 with the Status object's reason
 * and message, or status 0 when no response arrived (refused, reset, timed out). The
 * message says what failed and, for the failures a user can fix, what to do.
 */
export class KubeApiError extends Error {
  override readonly name = 'KubeApiError';
  /** What to do about it, for the failures a user can fix. */
  readonly hint?: string;
  readonly statusObject?: KubeStatus;
  /** Seconds the server asked to wait (Retry-After header or Status details), if any. */
  readonly retryAfterSeconds?: number;
  /** Node's error code for network failures (ECONNREFUSED, ...). */
  readonly code?: string;

  constructor(
    /** HTTP status; 0 when no response arrived. */
    readonly status: number,
    /** The Status reason ('NotFound', 'Forbidden', 'Expired', ...), or 'Unreachable' / 'Timeout' / 'NetworkError'. */
    readonly reason: string,
    /** The server's own message (or the network error's). */
    readonly detail: string,
    readonly method: string,
    readonly path: string,
    extra: {
      hint?: string;
      statusObject?: KubeStatus;
      retryAfterSeconds?: number;
      code?: string;
      cause?: unknown;
    } = {},
  ) {
    const what = status ? `HTTP ${status} ${reason}` : reason;
    super(`${method} ${path}: ${what}: ${detail}${extra.hint ? `. ${extra.hint}` : ''}`, { cause: extra.cause });
    this.hint = extra.hint;
    this.statusObject = extra.statusObject;
    this.retryAfterSeconds = extra.retryAfterSeconds;
    this.code = extra.code;
  }

  /** 410 Gone / Expired: the resourceVersion is too old; the caller must list again. */
  get isGone(): boolean {
    return this.status === 410 || this.reason === 'Expired' || this.reason === 'Gone';
  }

  /** From an HTTP response with status >= 400 (body: the Status JSON, or text). */
  static fromResponse(
    request: FailedRequest,
    status: number,
    body: Buffer | string | KubeStatus,
    retryAfterHeader?: string | string[],
  ): KubeApiError {
    const statusObject = typeof body === 'object' && !Buffer.isBuffer(body) ? body : parseStatus(body.toString());
    const text = typeof body === 'string' ? body : Buffer.isBuffer(body) ? body.toString() : '';
    const reason = statusObject?.reason || defaultReason(status);
    const detail = statusObject?.message || text.trim().slice(0, 500) || 'no message';
    const header = Array.isArray(retryAfterHeader) ? retryAfterHeader[0] : retryAfterHeader;
    const retryAfterSeconds =
      statusObject?.details?.retryAfterSeconds ?? (header ? Number(header) || undefined : undefined);
    const hint = hintFor(request, status, statusObject);
    return new KubeApiError(status, reason, detail, request.method, request.path, {
      ...(hint ? { hint } : {}),
      ...(statusObject ? { statusObject } : {}),
      ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
    });
  }

  /** From a failure before any response: refused, reset, DNS, TLS, timeout. */
  static fromNetwork(request: FailedRequest, server: string, cause: Error): KubeApiError {
    const code = (cause as NodeJS.ErrnoException).code;
    const reason = (code && NETWORK_REASON[code]) || 'NetworkError';
    let hint: string | undefined;
    if (reason === 'Unreachable') {
      hint = `The API server at ${server} is unreachable: check that it is running and that the kubeconfig's cluster server address is right`;
    } else if (code && /CERT|SELF_SIGNED|SIGNATURE|TLS/.test(code)) {
      hint = `TLS verification of ${server} failed: check the cluster's certificate-authority in the kubeconfig`;
    }
    return new KubeApiError(0, reason, `${code ? `${code} ` : ''}${cause.message}`, request.method, request.path, {
      ...(hint ? { hint } : {}),
      ...(code ? { code } : {}),
      cause,
    });
  }
}

/**
 * Milliseconds the API server asked the caller to wait before trying again (Retry-After,
 * or the Status's retryAfterSeconds: API Priority and Fairness sends it with 429), found on
 * `error` or its causes; undefined when it asked for nothing.
 */
export function retryAfterMs(error: unknown): number | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const seconds = e.name === 'KubeApiError' ? (e as KubeApiError).retryAfterSeconds : undefined;
    if (seconds !== undefined && seconds > 0) return seconds * 1000;
  }
  return undefined;
}

function parseStatus(text: string): KubeStatus | undefined {
  if (!text.startsWith('{')) return undefined;
  try {
    const parsed = JSON.parse(text) as KubeStatus;
    return parsed.kind === 'Status' || parsed.message !== undefined ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function defaultReason(status: number): string {
  const reasons: Record<number, string> = {
    400: 'BadRequest',
    401: 'Unauthorized',
    403: 'Forbidden',
    404: 'NotFound',
    405: 'MethodNotAllowed',
    409: 'Conflict',
    410: 'Gone',
    422: 'Invalid',
    429: 'TooManyRequests',
    500: 'InternalError',
    503: 'ServiceUnavailable',
    504: 'Timeout',
  };
  return reasons[status] ?? `HTTP${status}`;
}

function hintFor(request: FailedRequest, status: number, statusObject: KubeStatus | undefined): string | undefined {
  const target = describeRequest(request);
  switch (status) {
    case 401:
      return "The API server did not accept the credentials: the kubeconfig user's token or client certificate is invalid or expired";
    case 403:
      return target.resource
        ? `RBAC does not allow it: grant the operator's ServiceAccount a rule with apiGroups: ["${target.group}"], resources: ["${target.resource}"], verbs: ["${target.verb}"]${target.namespace ? ` (in namespace ${target.namespace}, or cluster-wide)` : ''}`
        : undefined;
    case 404:
      // The object is missing when the Status names it; else the path itself is not served.
      if (!target.resource || statusObject?.details?.name) return undefined;
      return `The API server does not serve ${target.resource}${target.group ? `.${target.group}` : ''} in ${target.groupVersion}: install its CustomResourceDefinition, or check the group and version`;
    default:
      return undefined;
  }
}

/** Verb, group and resource of a REST path, as RBAC names them. */
export function describeRequest(request: FailedRequest): {
  verb: string;
  group: string;
  groupVersion: string;
  resource?: string;
  namespace?: string;
  name?: string;
} {
  const segments = request.path.split('?')[0]!.split('/').filter(Boolean);
  const core = segments[0] === 'api';
  const group = core ? '' : (segments[1] ?? '');
  const groupVersion = core ? (segments[1] ?? '') : `${segments[1] ?? ''}/${segments[2] ?? ''}`;
  let rest = segments.slice(core ? 2 : 3);
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = decodeURIComponent(rest[1]!);
    rest = rest.slice(2);
  }
  const [plural, name, subresource] = rest;
  const resource = plural && subresource ? `${plural}/${subresource}` : plural;
  const verb = verbOf(request.method.toUpperCase(), name !== undefined, request.watch === true);
  return {
    verb,
    group,
    groupVersion,
    ...(resource && (segments[0] === 'api' || segments[0] === 'apis') ? { resource } : {}),
    ...(namespace ? { namespace } : {}),
    ...(name ? { name: decodeURIComponent(name) } : {}),
  };
}

function verbOf(method: string, named: boolean, watch: boolean): string {
  switch (method) {
    case 'GET':
    case 'HEAD':
      return watch ? 'watch' : named ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return named ? 'delete' : 'deletecollection';
    default:
      return method.toLowerCase();
  }
}
