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

  /** A JSON request; a status >= 400 throws a KubeApiError. */
  request<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
    timeoutMs?: number,
  ): Promise<T> {
    return this.transport.json<T>(method, path, {
      ...(body !== undefined ? { body, contentType } : {}),
      ...(timeoutMs ? { timeoutMs } : {}),
    });
  }

  /** A request whose status and text are returned whatever the status. */
  async raw(
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
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
