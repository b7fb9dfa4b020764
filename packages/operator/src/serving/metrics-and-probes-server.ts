import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { silentLogger, type RuntimeLogger } from '@nestor/core';
import type { HealthCheck, ManagerHealth } from '../runtime/manager/manager.js';
import { apiServerReviews, type ReviewTransport } from './access-reviews.js';
import { httpEndpoints, type HttpEndpointOptions, type MetricsEndpoint } from './http-endpoints.js';
import { MetricsAccess } from './metrics-access.js';
import { listenOn } from './listen-on.js';
import { probeChecks, probeResponse, type Probe } from './probe-response.js';
import { ServingCertificate } from './serving-certificate.js';

// Not imported from 'node:http': an ES import of it loads undici, about 3 MB of RSS
// (packages/core/src/http1-exchange.ts says why); its CommonJS exports do not.
const { createServer: createHttpServer } = process.getBuiltinModule('node:http');

type Route = (req: IncomingMessage, res: ServerResponse, query: URLSearchParams) => Promise<void> | void;

/** One listening socket and what it serves. */
interface Listener {
  port: number;
  host: string;
  secure: boolean;
  routes: Map<string, Route>;
}

const TEXT = 'text/plain; charset=utf-8';

/** What /metrics serves: OperatorMetrics, or any Prometheus registry. */
export interface MetricsSource {
  scrape(): Promise<string>;
  readonly contentType: string;
}

export interface MetricsAndProbesServerOptions extends HttpEndpointOptions {
  /** The probes' source: the manager (liveness is its state, readiness its checks). */
  manager: { health(): ManagerHealth };
  /** What /metrics serves (required unless metrics.port is 0). */
  registry?: MetricsSource;
  /** The API server, which authenticates and authorizes the callers of /metrics (required with metrics.auth). */
  transport?: ReviewTransport;
  /** More readiness checks, asked on each probe: the webhook server's, so a replica that cannot admit gets no traffic. */
  readiness?: ReadonlyArray<{ healthCheck(): HealthCheck | undefined }>;
  /** Where each part logs, by context (OperatorHttp, MetricsAuth, MetricsCertificate); default silent. */
  logger?: (context: string) => RuntimeLogger;
}

/**
 * Serves /metrics and the kubelet probes /healthz, /readyz on their own ports, as
 * controller-runtime's metrics server and health probe listener do (defaults 8443, 8080
 * over plain HTTP, and 8081; 0 turns one off). /metrics is HTTPS and answers only callers
 * the API server authenticates and authorizes (`metrics.secure: false` serves plain HTTP to
 * anyone). Probes are plain HTTP and say which checks failed, never why: the reasons go to
 * the log. Start it before the manager, so probes answer during the cache sync.
 */
export class MetricsAndProbesServer {
  private readonly servers: Server[] = [];
  private certificate?: ServingCertificate;
  private readonly logger: RuntimeLogger;
  /** The reason last logged for each failing probe check: logged when it changes, not on every probe. */
  private readonly loggedFailures = new Map<string, string>();

  constructor(private readonly options: MetricsAndProbesServerOptions) {
    this.logger = this.loggerFor('OperatorHttp');
  }

  /** Ports actually listened on, by what they serve. */
  readonly addresses: { metrics?: number; health?: number } = {};

  /** Checks the options (an error says what to change), then listens; a port that cannot be bound fails it. */
  async start(): Promise<void> {
    const { metrics, health } = httpEndpoints(this.options);
    const registry = this.options.registry;
    if (metrics && !registry) {
      throw new Error('MetricsAndProbesServer: /metrics needs a registry (OperatorMetrics), or set metrics.port to 0');
    }
    const transport = this.options.transport;
    if (metrics?.auth && !transport) {
      throw new Error(
        'MetricsAndProbesServer: metrics.auth asks the API server about each caller: give it the operator’s Transport, or turn auth off',
      );
    }
    const listeners: Listener[] = [];
    const listenerFor = (port: number, host: string, secure: boolean) => {
      let listener = listeners.find((l) => l.port === port);
      if (!listener) listeners.push((listener = { port, host, secure, routes: new Map() }));
      return listener;
    };
    if (metrics) {
      const access = metrics.auth
        ? new MetricsAccess(apiServerReviews(transport!), { logger: this.loggerFor('MetricsAuth') })
        : undefined;
      if (metrics.secure) this.certificate = this.servingCertificate(metrics);
      listenerFor(metrics.port, metrics.host, metrics.secure).routes.set('/metrics', (req, res) =>
        this.serveMetrics(req, res, registry!, access),
      );
    }
    if (health) {
      const { routes } = listenerFor(health.port, health.host, false);
      routes.set('/healthz', (_, res, query) => this.serveProbe(res, 'healthz', query));
      routes.set('/readyz', (_, res, query) => this.serveProbe(res, 'readyz', query));
    }
    try {
      for (const listener of listeners) await this.listen(listener, metrics);
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  /** Closes the ports and their connections. */
  async stop(): Promise<void> {
    this.certificate?.stop();
    await Promise.all(
      this.servers.splice(0).map(
        (server) =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
          }),
      ),
    );
  }

  private servingCertificate(metrics: MetricsEndpoint): ServingCertificate {
    const specificHost = metrics.host !== '0.0.0.0' && metrics.host !== '::' && metrics.host !== 'localhost';
    return new ServingCertificate({
      ...(metrics.certDir ? { certDir: metrics.certDir } : {}),
      ...(metrics.certName ? { certName: metrics.certName } : {}),
      ...(metrics.keyName ? { keyName: metrics.keyName } : {}),
      hosts: ['localhost', '127.0.0.1', ...(specificHost && metrics.host !== '127.0.0.1' ? [metrics.host] : [])],
      logger: this.loggerFor('MetricsCertificate'),
    });
  }

  private async listen(listener: Listener, metrics: MetricsEndpoint | undefined): Promise<void> {
    const { port, host, secure, routes } = listener;
    const paths = [...routes.keys()].join(', ');
    const handle = (req: IncomingMessage, res: ServerResponse) => this.route(routes, req, res);
    let server: Server;
    if (secure) {
      const certificate = this.certificate!;
      const https = createHttpsServer({ ...certificate.current }, handle);
      certificate.watch((pair) => https.setSecureContext(pair));
      server = https;
    } else {
      server = createHttpServer(handle);
    }
    const bound = await listenOn(server, host, port, {
      what: paths,
      option:
        'metrics.port / health.port, or the --metrics-bind-address / --health-probe-bind-address flag (0 turns one off)',
    });
    this.servers.push(server);
    if (routes.has('/metrics')) this.addresses.metrics = bound;
    if (routes.has('/readyz')) this.addresses.health = bound;
    const how = !secure
      ? 'plain HTTP, no authentication'
      : `HTTPS with ${this.certificate!.source}${metrics?.auth ? ', callers authorized by the API server' : ', no authentication'}`;
    this.logger.info(`serving ${paths} on ${host}:${bound} (${how})`);
  }

  private route(routes: Map<string, Route>, req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? '/';
    const queryAt = url.indexOf('?');
    const path = queryAt < 0 ? url : url.slice(0, queryAt);
    const route = routes.get(path);
    if (!route) {
      res.writeHead(404, { 'content-type': TEXT }).end(`not found; try ${[...routes.keys()].join(', ')}\n`);
      return;
    }
    const query = new URLSearchParams(queryAt < 0 ? '' : url.slice(queryAt + 1));
    Promise.resolve()
      .then(() => route(req, res, query))
      .catch((error: unknown) => {
        // The reason stays in the log: these ports answer callers who may not see internals.
        this.logger.error(`${req.method ?? 'GET'} ${path} failed: ${(error as Error).message}`);
        if (!res.headersSent) res.writeHead(500, { 'content-type': TEXT });
        res.end('internal error\n');
      });
  }

  private loggerFor(context: string): RuntimeLogger {
    return this.options.logger?.(context) ?? silentLogger;
  }

  private async serveMetrics(
    req: IncomingMessage,
    res: ServerResponse,
    registry: MetricsSource,
    access?: MetricsAccess,
  ): Promise<void> {
    if (access) {
      // As controller-runtime: the request's method, lower-cased, is the verb on the URL.
      const verb = (req.method ?? 'GET').toLowerCase();
      const decision = await access.check(req.headers.authorization, { verb, path: '/metrics' });
      if (decision.status !== 200) {
        res
          .writeHead(decision.status, {
            'content-type': TEXT,
            ...(decision.status === 401 ? { 'www-authenticate': 'Bearer realm="metrics"' } : {}),
            ...(decision.status === 429 ? { 'retry-after': String(decision.retryAfterSeconds) } : {}),
          })
          .end(`${decision.message}\n`);
        return;
      }
    }
    const body = await registry.scrape();
    res.writeHead(200, { 'content-type': registry.contentType }).end(body);
  }

  private serveProbe(res: ServerResponse, probe: Probe, query: URLSearchParams): void {
    const managerHealth = this.options.manager.health();
    // Readiness includes the webhook server: a replica that cannot answer admission must get no traffic.
    const more = (this.options.readiness ?? []).flatMap((source) => source.healthCheck() ?? []);
    const health = more.length ? { ...managerHealth, checks: [...managerHealth.checks, ...more] } : managerHealth;
    this.logFailures(probe, health);
    const { status, body } = probeResponse(probe, health, query.has('verbose'));
    res.writeHead(status, { 'content-type': TEXT }).end(body);
  }

  private logFailures(probe: Probe, health: ManagerHealth): void {
    for (const check of probeChecks(probe, health)) {
      const key = `${probe} ${check.name}`;
      if (check.ok) {
        this.loggedFailures.delete(key);
        continue;
      }
      const reason = check.detail ?? 'no reason given';
      if (this.loggedFailures.get(key) === reason) continue;
      this.loggedFailures.set(key, reason);
      this.logger.warn(`${probe}: ${check.name} failed: ${reason}`);
    }
  }
}
