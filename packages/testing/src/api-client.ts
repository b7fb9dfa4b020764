import type { KubeConfig } from '@kubernetes/client-node';
import { Transport } from '@nestor/core';

/**
 * Terse JSON calls for test set-up (`request('POST', path, body)`), over the same
 * `Transport` operators run: one HTTP path to the API server, one error type
 * (`KubeApiError`, with the status and the server's message).
 */
export class ApiClient {
  private constructor(
    /** The transport underneath, for watches or anything the helpers do not cover. */
    readonly transport: Transport,
  ) {}

  /** A client with the TLS material and auth that client-node derives from the config. */
  static async fromKubeConfig(kubeConfig: KubeConfig): Promise<ApiClient> {
    return new ApiClient(await Transport.fromKubeConfig(kubeConfig, { requestTimeoutMs: 15_000 }));
  }

  /** The API server's URL. */
  get server(): string {
    return this.transport.server;
  }

  /**
   * A JSON request, answered with the parsed body; a status >= 400 throws a `KubeApiError`
   * (its `status`, `reason` and `detail`: the API server's message).
   *
   * The body is sent as JSON. `contentType` defaults to `application/merge-patch+json` for
   * PATCH (a JSON merge patch: fields given replace, `null` removes) and `application/json`
   * otherwise; pass `application/json-patch+json` for a JSON Patch (RFC 6902),
   * `application/strategic-merge-patch+json` for a strategic merge patch on built-in kinds,
   * or `application/apply-patch+yaml` with `?fieldManager=...` for server-side apply.
   *
   * ```ts
   * await env.client.request('PATCH', `/api/v1/namespaces/${ns}/configmaps/settings`, { data: { size: '3' } });
   * ```
   */
  request<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    contentType = defaultContentType(method),
    timeoutMs?: number,
  ): Promise<T> {
    return this.transport.json<T>(method, path, {
      ...(body !== undefined ? { body, contentType } : {}),
      ...(timeoutMs ? { timeoutMs } : {}),
    });
  }

  /**
   * The same request, but nothing is thrown for a status >= 400: the answer is
   * `{ status, text }`, the HTTP status and the body as text (JSON for the API server's
   * objects and its `Status` errors: `JSON.parse(text).reason`). For a test that expects a
   * refusal, or checks a status code. Network failures still throw.
   *
   * ```ts
   * const { status, text } = await env.client.raw('GET', `/api/v1/namespaces/${ns}/secrets`);
   * assert.equal(status, 403, text);
   * ```
   */
  async raw(
    method: string,
    path: string,
    body?: unknown,
    contentType = defaultContentType(method),
    timeoutMs?: number,
  ): Promise<{ status: number; text: string }> {
    const response = await this.transport.request(method, path, {
      ...(body !== undefined ? { body, contentType } : {}),
      ...(timeoutMs ? { timeoutMs } : {}),
    });
    return { status: response.status, text: response.body.toString('utf8') };
  }

  close(): void {
    this.transport.close();
  }
}

/** A PATCH of JSON is a merge patch unless told otherwise: the API server refuses `application/json` there (415). */
function defaultContentType(method: string): string {
  return method.toUpperCase() === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
}
