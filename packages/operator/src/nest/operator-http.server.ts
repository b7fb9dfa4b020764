import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Transport } from '@nestor/core';
import { OperatorMetrics } from '../metrics/operator-metrics.js';
import { Manager, type ManagerHealth } from '../runtime/manager.js';
import { apiServerReviews } from './access-reviews.js';
import { httpEndpoints, type MetricsEndpoint } from './http-endpoints.js';
import { MetricsAccess } from './metrics-access.js';
import { listenOn } from './listen-on.js';
import { runtimeLogger } from './nest-logger.js';
import { OPERATOR_MODULE_OPTIONS } from './operator.module-definition.js';
import type { OperatorModuleOptions } from './interfaces/operator-options.interface.js';
import { probeChecks, probeResponse, type Probe } from './probe-response.js';
import { ServingCertificate } from './serving-certificate.js';
import { WebhookServer } from './webhook.server.js';

type Route = (req: IncomingMessage, res: ServerResponse, query: URLSearchParams) => Promise<void> | void;

/** One listening socket and what it serves. */
interface Listener {
  port: number;
  host: string;
  secure: boolean;
  routes: Map<string, Route>;
}

const TEXT = 'text/plain; charset=utf-8';

/**
 * Serves /metrics and the kubelet probes /healthz, /readyz on their own ports, as
 * controller-runtime does (defaults 8443, 8080 over plain HTTP, and 8081; 0 turns one off). /metrics is HTTPS and
 * answers only callers the API server authenticates and authorizes (`metrics.secure: false`
 * serves plain HTTP to anyone). Probes are plain HTTP and say which checks failed, never
 * why: the reasons go to the log. Listens before the manager starts, so probes answer
 * during the cache sync.
 */
@Injectable()
export class OperatorHttpServer implements OnModuleInit, OnApplicationShutdown {
  private readonly servers: Server[] = [];
  private certificate?: ServingCertificate;
  private readonly logger = new Logger('OperatorHttp');
  /** The reason last logged for each failing probe check: logged when it changes, not on every probe. */
  private readonly loggedFailures = new Map<string, string>();

  constructor(
    private readonly manager: Manager,
    private readonly metrics: OperatorMetrics,
    private readonly transport: Transport,
    private readonly webhooks: WebhookServer,
    @Inject(OPERATOR_MODULE_OPTIONS) private readonly options: OperatorModuleOptions,
  ) {}

  /** Ports actually listened on, by what they serve. */
  readonly addresses: { metrics?: number; health?: number } = {};

  async onModuleInit(): Promise<void> {
    const { metrics, health } = httpEndpoints(this.options);
    const listeners: Listener[] = [];
    const listenerFor = (port: number, host: string, secure: boolean) => {
      let listener = listeners.find((l) => l.port === port);
      if (!listener) listeners.push((listener = { port, host, secure, routes: new Map() }));
      return listener;
    };
    if (metrics) {
      const access = metrics.auth
        ? new MetricsAccess(apiServerReviews(this.transport), { logger: runtimeLogger('MetricsAuth') })
        : undefined;
      if (metrics.secure) this.certificate = this.servingCertificate(metrics);
      listenerFor(metrics.port, metrics.host, metrics.secure).routes.set('/metrics', (req, res) =>
        this.serveMetrics(req, res, access),
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
      await this.onApplicationShutdown();
      throw error;
    }
  }

  async onApplicationShutdown(): Promise<void> {
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
      logger: runtimeLogger('MetricsCertificate'),
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
      option: 'metrics.port / health.port (0 turns one off)',
    });
    this.servers.push(server);
    if (routes.has('/metrics')) this.addresses.metrics = bound;
    if (routes.has('/readyz')) this.addresses.health = bound;
    const how = !secure
      ? 'plain HTTP, no authentication'
      : `HTTPS with ${this.certificate!.source}${metrics?.auth ? ', callers authorized by the API server' : ', no authentication'}`;
    this.logger.log(`serving ${paths} on ${host}:${bound} (${how})`);
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

  private async serveMetrics(req: IncomingMessage, res: ServerResponse, access?: MetricsAccess): Promise<void> {
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
    const body = await this.metrics.scrape();
    res.writeHead(200, { 'content-type': this.metrics.contentType }).end(body);
  }

  private serveProbe(res: ServerResponse, probe: Probe, query: URLSearchParams): void {
    const managerHealth = this.manager.health();
    // Readiness includes the webhook server: a replica that cannot answer admission must get no traffic.
    const webhookCheck = this.webhooks.healthCheck();
    const health = webhookCheck ? { ...managerHealth, checks: [...managerHealth.checks, webhookCheck] } : managerHealth;
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
