import type { Agent as HttpAgent, ClientRequest, IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Credentials } from './kubeconfig-credentials.js';
import { tlsOptions, type Exchange, type Exchanger, type OutgoingRequest, type ResponseHead } from './exchange.js';
import { DEFAULT_TCP_KEEPALIVE_MS } from './defaults.js';

// Not `import http from 'node:http'`: an ES import of node:http builds its namespace, which
// reads the module's lazy WebSocket getters and so loads undici, about 3 MB of RSS an
// operator never uses (bench/floor.mjs). The CommonJS exports do not.
const http = process.getBuiltinModule('node:http');

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Below the API server's 90 s idle timeout, so a request rarely meets a socket the server is closing. */
const FREE_SOCKET_TIMEOUT_MS = 60_000;

export interface Http1Target {
  secure: boolean;
  hostname: string;
  port: number;
  /** Connections for ordinary requests (default 32); watches have their own, uncapped. */
  maxSockets?: number;
}

/**
 * HTTP/1.1 to one API server: a keep-alive pool for requests and another for watches (a
 * watch holds its connection for minutes and must never wait behind, or starve, ordinary
 * requests). Through a proxy, the proxy's agent serves both.
 */
export class Http1Exchanger implements Exchanger {
  readonly protocol = 'http/1.1';
  private requestAgent!: HttpAgent;
  private watchAgent!: HttpAgent;

  constructor(
    private readonly target: Http1Target,
    credentials: Credentials,
  ) {
    this.createAgents(credentials);
  }

  open(request: OutgoingRequest): Exchange {
    return new Http1Exchange(this.target, request, request.watch ? this.watchAgent : this.requestAgent);
  }

  rotate(credentials: Credentials): void {
    this.close();
    this.createAgents(credentials);
  }

  close(): void {
    this.requestAgent.destroy();
    this.watchAgent.destroy();
  }

  private createAgents(credentials: Credentials): void {
    if (credentials.proxyAgent) {
      this.requestAgent = this.watchAgent = credentials.proxyAgent;
      return;
    }
    const { secure } = this.target;
    const common = {
      keepAlive: true,
      keepAliveMsecs: DEFAULT_TCP_KEEPALIVE_MS,
      scheduling: 'lifo' as const,
      ...tlsOptions(secure, credentials),
    };
    const maxSockets = this.target.maxSockets ?? 32;
    const Agent = secure ? https.Agent : http.Agent;
    this.requestAgent = new Agent({
      ...common,
      maxSockets,
      maxFreeSockets: maxSockets,
      timeout: FREE_SOCKET_TIMEOUT_MS,
    });
    this.watchAgent = new Agent(common);
  }
}

class Http1Exchange implements Exchange {
  readonly head: Promise<ResponseHead>;
  private readonly req: ClientRequest;
  private res?: IncomingMessage;

  constructor(
    target: Http1Target,
    private readonly request: OutgoingRequest,
    private readonly agent: HttpAgent,
  ) {
    const { payload } = request;
    let headers = request.headers;
    if (payload) headers = { ...headers, 'content-length': payload.length };
    this.req = (target.secure ? https : http).request({
      hostname: target.hostname,
      port: target.port,
      path: request.target,
      method: request.method,
      agent,
      headers,
    });
    this.head = new Promise((resolve, reject) => {
      this.req.once('response', (res: IncomingMessage) => {
        this.res = res;
        resolve({ status: res.statusCode ?? 0, headers: res.headers });
      });
      this.req.once('error', reject);
    });
    this.req.end(payload);
  }

  get body(): AsyncIterable<Buffer> {
    const res = this.res!;
    return (async function* () {
      for await (const chunk of res) yield chunk as Buffer;
      if (!res.complete) throw new Error('the connection closed before the response was complete');
    })();
  }

  readBody(): Promise<Buffer> {
    const res = this.res!;
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
      res.once('error', reject);
      res.once('close', () => {
        if (!res.complete) reject(new Error('the connection closed before the response was complete'));
      });
    });
  }

  /** A kept-alive socket the server closed just as we reused it: safe to resend a read. */
  resendable(error: unknown): boolean {
    const stale = this.req.reusedSocket && (error as NodeJS.ErrnoException).code === 'ECONNRESET';
    return stale && IDEMPOTENT.has(this.request.method);
  }

  /** HTTP/1.1 has no way to end one request and keep the connection. */
  resetByServer(): boolean {
    return false;
  }

  discard(): void {
    this.res?.resume();
  }

  expire(): void {
    // No answer at all: the connection may have died without closing (a NAT or load
    // balancer that dropped it), and its idle siblings with it.
    if (!this.res) dropIdleSockets(this.agent);
    this.cut();
  }

  /**
   * With no error object, and not once the response is complete: then its socket has left
   * the request for the pool and an 'error' on it would go unheard.
   */
  cut(): void {
    if (!this.res?.complete) this.req.destroy();
  }

  release(): void {
    if (this.res && !this.res.complete) this.res.destroy();
  }
}

/** Closes the agent's idle kept-alive sockets, so the next requests open fresh connections. */
function dropIdleSockets(agent: HttpAgent): void {
  for (const sockets of Object.values(agent.freeSockets)) {
    for (const socket of sockets ?? []) socket.destroy();
  }
}
