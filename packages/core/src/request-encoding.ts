import type { Query, RequestOptions } from './transport-requests.js';

/** The body as sent: a Buffer or string as is, anything else as JSON. */
export function encodeBody(body: unknown): Buffer | undefined {
  if (body === undefined) return undefined;
  if (Buffer.isBuffer(body)) return body;
  return Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
}

/** `?key=value&...` of the query's defined values, or '' when there are none. */
export function queryString(query: Query | undefined): string {
  let out = '';
  for (const key in query) {
    const value = query[key];
    if (value !== undefined) out += `${out ? '&' : '?'}${key}=${encodeURIComponent(String(value))}`;
  }
  return out;
}

/** The shared headers, with the request's own Accept and content type when it has them (shared as is otherwise). */
export function requestHeaders(
  shared: Record<string, string>,
  payload: Buffer | undefined,
  options: RequestOptions,
): Record<string, string> {
  if (!payload && !options.accept) return shared;
  const headers = { ...shared };
  if (options.accept) headers['accept'] = options.accept;
  if (payload) headers['content-type'] = options.contentType ?? 'application/json';
  return headers;
}
