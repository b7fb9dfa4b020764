import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface OnceAnswer {
  status: number;
  text: string;
  /** '1.1' or '1.0'. */
  httpVersion: string;
}

export interface OnceRequest {
  port: number;
  path: string;
  host?: string;
  /** POST when there is a body, else GET. */
  method?: string;
  body?: string | Buffer;
  /** The CA to trust: given, the request is HTTPS. */
  ca?: string | Buffer;
  headers?: Record<string, string>;
  /** The address to send from (127.0.0.x: one peer each). */
  localAddress?: string;
}

/**
 * One request over its own HTTP/1.1 connection (no agent, nothing pooled between requests),
 * the answer read whole: what the API server's webhook client or a probe does. A JSON body
 * is sent as application/json unless `headers` say otherwise.
 */
export function requestOnce(options: OnceRequest): Promise<OnceAnswer> {
  const { body, ca } = options;
  const send = ca ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      {
        host: options.host ?? '127.0.0.1',
        port: options.port,
        path: options.path,
        method: options.method ?? (body === undefined ? 'GET' : 'POST'),
        headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
        ...(ca ? { ca } : {}),
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, httpVersion: res.httpVersion }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
