import { Agent, request, type AgentOptions, type RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly method: string,
    readonly path: string,
    readonly body: string,
  ) {
    super(`${method} ${path}: HTTP ${status}: ${ApiError.reason(body)}`);
  }

  private static reason(body: string): string {
    try {
      return (JSON.parse(body) as { message?: string }).message ?? body;
    } catch {
      return body.slice(0, 500);
    }
  }
}

/**
 * The small JSON client the environment uses for its own work (readiness, CRDs,
 * namespaces). Operators use @nestor/operator's transport, not this.
 */
export class ApiClient {
  private readonly agent: Agent;

  private constructor(
    readonly server: string,
    tls: AgentOptions,
    private readonly headers: Record<string, string>,
  ) {
    this.agent = new Agent({ keepAlive: true, ...tls });
  }

  /** A client with the TLS material and auth that client-node derives from the config. */
  static async fromKubeConfig(kubeConfig: KubeConfig): Promise<ApiClient> {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster: set current-context');
    const options: RequestOptions = {};
    await kubeConfig.applyToHTTPSOptions(options);
    const { ca, cert, key, rejectUnauthorized, servername } = options;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      if (typeof value === 'string') headers[name.toLowerCase()] = value;
    }
    const tls = Object.fromEntries(
      Object.entries({ ca, cert, key, rejectUnauthorized, servername }).filter(([, v]) => v !== undefined),
    ) as AgentOptions;
    return new ApiClient(cluster.server, tls, headers);
  }

  async request<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
    timeoutMs = 15_000,
  ): Promise<T> {
    const { status, text } = await this.raw(method, path, body, contentType, timeoutMs);
    if (status >= 400) throw new ApiError(status, method, path, text);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  raw(
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
    timeoutMs = 15_000,
  ): Promise<{ status: number; text: string }> {
    const url = new URL(path, this.server);
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        url,
        {
          method,
          agent: this.agent,
          timeout: timeoutMs,
          headers: {
            accept: 'application/json',
            ...this.headers,
            ...(payload !== undefined
              ? { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) }
              : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${url.pathname} timed out after ${timeoutMs} ms`)));
      req.on('error', reject);
      req.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
