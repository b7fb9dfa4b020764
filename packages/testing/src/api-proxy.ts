import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Agent, createServer, request as httpsRequest, type Server } from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import { selfSignedCertificate } from '@nestor/core';

/** A request through the proxy, as a fault rule sees it. */
export interface ProxiedRequest {
  method: string;
  /** The path without the query. */
  path: string;
  query: URLSearchParams;
  /** A GET with ?watch=true (or =1). */
  watch: boolean;
  /** Date.now() when it arrived. */
  at: number;
}

/**
 * What the proxy does to a request a rule matches:
 * - `cutAfterBytes`: forwards the response's head and this many bytes of its body, then
 *   destroys the connection (a load balancer or a network that drops it mid-response);
 * - `answer`: answers with this status and Status object itself, never asking the server
 *   (an API server that fails one page of a list: 500, 503 while it shuts down, 504);
 * - `errorEvent`: a watch, asked in JSON, ends after `afterEvents` events (default 0) with
 *   an ERROR event carrying this object, as the API server ends a watch it cannot go on with;
 * - `hold`: never answers, never asking the server; the request stays open until the client
 *   gives up (a kube-apiserver that is starting accepts connections and holds requests).
 */
export type ProxyFault =
  | { cutAfterBytes: number }
  | { answer: { status: number; body: unknown } }
  | { errorEvent: unknown; afterEvents?: number }
  | { hold: true };

export interface ProxyRule {
  match: (request: ProxiedRequest) => boolean;
  fault: ProxyFault;
  /** How many matching requests it applies to (default 1). */
  times?: number;
}

/** A rule once injected: how many requests it has hit so far. */
export interface InjectedFault {
  readonly hits: number;
  /** The requests it hit. */
  readonly requests: readonly ProxiedRequest[];
}

export interface ApiProxyOptions {
  /**
   * The serving certificate and key (default: a fresh self-signed one, which kubeConfig()
   * trusts). The API server's own (TestEnvironment.apiServerCertificate()) makes the proxy
   * a drop-in for the server: a client's kubeconfig needs no change, only its route
   * (TcpRelay.retarget).
   */
  certificate?: { cert: string; key: string };
}

interface OpenWatch {
  request: ProxiedRequest;
  response: ServerResponse;
  upstream: { destroy(): void };
  ended: boolean;
}

/**
 * An HTTPS proxy in front of the API server that can break what passes through it, at the
 * HTTP level (TcpRelay breaks connections): it cuts a response after so many bytes, answers
 * a request with an error itself, or ends a watch with an ERROR event. Everything else is
 * forwarded as is, credentials included (the client's Authorization header: token
 * authentication, TestEnvironment's default; a client certificate ends at the proxy).
 * Watches are asked in JSON, so that an ERROR event can be written into any of them.
 * Listens on 127.0.0.1.
 */
export class ApiProxy {
  /** Every request so far, in order of arrival. */
  readonly requests: ProxiedRequest[] = [];
  private readonly rules: Array<ProxyRule & { left: number; hit: ProxiedRequest[] }> = [];
  private readonly open = new Set<OpenWatch>();

  private constructor(
    private readonly server: Server,
    /** The port it listens on, on 127.0.0.1. */
    readonly port: number,
    private readonly cert: string,
  ) {}

  /** Proxies to the current cluster of `kubeConfig` (its server and its CA). */
  static async start(kubeConfig: KubeConfig, options: ApiProxyOptions = {}): Promise<ApiProxy> {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster to proxy');
    const target = new URL(cluster.server);
    const ca = cluster.caData
      ? Buffer.from(cluster.caData, 'base64')
      : cluster.caFile
        ? readFileSync(cluster.caFile)
        : undefined;
    const agent = new Agent({ keepAlive: true, maxSockets: 64 });
    const upstream = {
      host: target.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: Number(target.port) || 443,
      ...(ca ? { ca } : {}),
      rejectUnauthorized: !cluster.skipTLSVerify,
      agent,
    };
    const certificate = options.certificate ?? selfSignedCertificate();
    const server = createServer({ cert: certificate.cert, key: certificate.key });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const proxy = new ApiProxy(server, (server.address() as { port: number }).port, certificate.cert);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => proxy.forward(req, res, upstream));
    server.on('close', () => agent.destroy());
    return proxy;
  }

  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  /** Watches open through the proxy now. */
  get openWatches(): number {
    return this.open.size;
  }

  /** Watches open through the proxy now that `match` selects. */
  watching(match: (request: ProxiedRequest) => boolean): number {
    let count = 0;
    for (const watch of this.open) if (match(watch.request)) count++;
    return count;
  }

  /** A copy of `kubeConfig` whose current cluster is reached through this proxy, trusting its certificate. */
  kubeConfig(kubeConfig: KubeConfig): KubeConfig {
    const current = kubeConfig.getCurrentCluster();
    if (!current) throw new Error('the kubeconfig has no current cluster to proxy');
    const proxied = new KubeConfig();
    proxied.loadFromOptions({
      clusters: kubeConfig.clusters.map((c) =>
        c.name === current.name
          ? { name: c.name, server: this.url, caData: Buffer.from(this.cert).toString('base64'), skipTLSVerify: false }
          : c,
      ),
      users: kubeConfig.users,
      contexts: kubeConfig.contexts,
      currentContext: kubeConfig.currentContext,
    });
    return proxied;
  }

  /** Applies `rule.fault` to the next `rule.times` requests it matches. */
  inject(rule: ProxyRule): InjectedFault {
    const injected = { ...rule, left: rule.times ?? 1, hit: [] as ProxiedRequest[] };
    this.rules.push(injected);
    return {
      get hits() {
        return injected.hit.length;
      },
      get requests() {
        return injected.hit;
      },
    };
  }

  /**
   * Ends every open watch `match` selects, now, with an ERROR event carrying `object` (after
   * the events already on their way), as the API server ends a watch it cannot go on with.
   * Returns how many it ended.
   */
  breakWatches(object: unknown, match: (request: ProxiedRequest) => boolean = () => true): number {
    let ended = 0;
    for (const watch of [...this.open]) {
      if (!match(watch.request)) continue;
      this.endWithError(watch, object);
      ended++;
    }
    return ended;
  }

  async close(): Promise<void> {
    for (const watch of this.open) {
      watch.upstream.destroy();
      watch.response.destroy();
    }
    this.open.clear();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private ruleFor(request: ProxiedRequest): ProxyFault | undefined {
    for (const rule of this.rules) {
      if (rule.left > 0 && rule.match(request)) {
        rule.left--;
        rule.hit.push(request);
        return rule.fault;
      }
    }
    return undefined;
  }

  private forward(
    req: IncomingMessage,
    res: ServerResponse,
    upstream: Record<string, unknown> & { agent: Agent },
  ): void {
    const url = new URL(req.url ?? '/', 'https://proxy');
    const watch = req.method === 'GET' && ['true', '1'].includes(url.searchParams.get('watch') ?? '');
    const request: ProxiedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      watch,
      at: Date.now(),
    };
    this.requests.push(request);
    const fault = this.ruleFor(request);
    if (fault && 'hold' in fault) {
      req.resume();
      return;
    }
    if (fault && 'answer' in fault) {
      req.resume();
      const body = JSON.stringify(fault.answer.body);
      res.writeHead(fault.answer.status, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
      res.end(body);
      return;
    }
    const headers = { ...req.headers };
    delete headers.host;
    delete headers.connection;
    if (watch) headers.accept = 'application/json';
    const out = httpsRequest({ ...upstream, method: req.method, path: req.url, headers }, (answer) => {
      answer.on('error', fail);
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      // Flushes the head now: a watch's client waits on it before the first event.
      res.flushHeaders();
      if (fault && 'cutAfterBytes' in fault) return this.cut(answer, res, fault.cutAfterBytes);
      if (watch && (answer.statusCode ?? 0) < 300) return this.relayWatch(request, answer, res, out, fault);
      answer.pipe(res);
    });
    const fail = () => {
      if (!res.writableEnded) res.destroy();
    };
    out.on('error', fail);
    // The client went away before the answer was complete: so does the request upstream.
    res.on('close', () => {
      if (!res.writableFinished) out.destroy();
    });
    req.pipe(out);
  }

  /** Forwards `bytes` of the body, then destroys the client's connection. */
  private cut(answer: IncomingMessage, res: ServerResponse, bytes: number): void {
    let left = bytes;
    answer.on('data', (chunk: Buffer) => {
      if (left <= 0) return;
      const part = chunk.length <= left ? chunk : chunk.subarray(0, left);
      left -= part.length;
      res.write(part);
      if (left <= 0) {
        answer.destroy();
        // Let the bytes go out before the connection does.
        setImmediate(() => res.socket?.destroy());
      }
    });
    answer.on('end', () => res.end());
  }

  /** A watch's lines, counted, so an ERROR event goes between two of them. */
  private relayWatch(
    request: ProxiedRequest,
    answer: IncomingMessage,
    res: ServerResponse,
    out: { destroy(): void },
    fault: ProxyFault | undefined,
  ): void {
    const watch: OpenWatch = { request, response: res, upstream: out, ended: false };
    this.open.add(watch);
    const errorAfter = fault && 'errorEvent' in fault ? (fault.afterEvents ?? 0) : undefined;
    let events = 0;
    let pending: Buffer = Buffer.alloc(0);
    const maybeError = () => {
      if (errorAfter !== undefined && events >= errorAfter && fault && 'errorEvent' in fault) {
        this.endWithError(watch, fault.errorEvent);
      }
    };
    maybeError();
    answer.on('data', (chunk: Buffer) => {
      if (watch.ended) return;
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      let newline: number;
      while (!watch.ended && (newline = pending.indexOf(0x0a)) >= 0) {
        res.write(pending.subarray(0, newline + 1));
        pending = pending.subarray(newline + 1);
        events++;
        maybeError();
      }
    });
    answer.on('end', () => {
      this.open.delete(watch);
      if (!watch.ended) res.end(pending);
    });
    res.on('close', () => this.open.delete(watch));
  }

  private endWithError(watch: OpenWatch, object: unknown): void {
    if (watch.ended) return;
    watch.ended = true;
    this.open.delete(watch);
    watch.upstream.destroy();
    watch.response.end(`${JSON.stringify({ type: 'ERROR', object })}\n`);
  }
}
