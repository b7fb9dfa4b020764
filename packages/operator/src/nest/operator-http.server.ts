import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { OperatorMetrics } from '../metrics/operator-metrics.js';
import { Manager } from '../runtime/manager.js';
import { OPERATOR_MODULE_OPTIONS } from './operator.module-definition.js';
import type { OperatorModuleOptions } from './operator-options.interface.js';

type Route = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;

/**
 * Serves /metrics (Prometheus) and /healthz, /readyz (kubelet probes) on their own ports,
 * as controller-runtime does (defaults 8080 and 8081; 0 turns one off; one port for both
 * is fine). Listens before the manager starts, so probes answer during the cache sync.
 */
@Injectable()
export class OperatorHttpServer implements OnModuleInit, OnApplicationShutdown {
  private readonly servers: Server[] = [];
  private readonly logger = new Logger('OperatorHttp');

  constructor(
    private readonly manager: Manager,
    private readonly metrics: OperatorMetrics,
    @Inject(OPERATOR_MODULE_OPTIONS) private readonly options: OperatorModuleOptions,
  ) {}

  /** Ports actually listened on, by what they serve (useful with port numbers chosen by the OS). */
  readonly addresses: { metrics?: number; health?: number } = {};

  async onModuleInit(): Promise<void> {
    const metricsPort = this.options.metrics?.port ?? 8080;
    const healthPort = this.options.health?.port ?? 8081;
    const host = this.options.metrics?.host ?? this.options.health?.host ?? '0.0.0.0';
    const routes = new Map<number, Map<string, Route>>();
    const at = (port: number) => routes.get(port) ?? routes.set(port, new Map()).get(port)!;
    if (metricsPort > 0) at(metricsPort).set('/metrics', (_, res) => this.serveMetrics(res));
    if (healthPort > 0) {
      at(healthPort).set('/healthz', (_, res) => this.serveHealth(res, 'live'));
      at(healthPort).set('/readyz', (_, res) => this.serveHealth(res, 'ready'));
    }
    for (const [port, table] of routes) {
      const server = createServer((req, res) => {
        const path = (req.url ?? '/').split('?')[0]!;
        const route = table.get(path);
        if (!route) {
          res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found; try ${[...table.keys()].join(', ')}\n`);
          return;
        }
        Promise.resolve(route(req, res)).catch((error: unknown) => {
          res.writeHead(500, { 'content-type': 'text/plain' }).end(`${(error as Error).message}\n`);
        });
      });
      await new Promise<void>((resolve, reject) => {
        server.once('error', (error: NodeJS.ErrnoException) =>
          reject(
            new Error(
              error.code === 'EADDRINUSE'
                ? `port ${port} for ${[...table.keys()].join(', ')} is in use: set OperatorModule options metrics.port / health.port (0 turns one off)`
                : `cannot serve ${[...table.keys()].join(', ')} on ${host}:${port}: ${error.message}`,
            ),
          ),
        );
        server.listen(port, host, () => resolve());
      });
      this.servers.push(server);
      if (table.has('/metrics')) this.addresses.metrics = port;
      if (table.has('/readyz')) this.addresses.health = port;
      this.logger.log(`serving ${[...table.keys()].join(', ')} on ${host}:${port}`);
    }
  }

  async onApplicationShutdown(): Promise<void> {
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

  private async serveMetrics(res: ServerResponse): Promise<void> {
    const body = await this.metrics.scrape();
    res.writeHead(200, { 'content-type': this.metrics.contentType }).end(body);
  }

  private serveHealth(res: ServerResponse, kind: 'live' | 'ready'): void {
    const health = this.manager.health();
    const ok = kind === 'live' ? health.live : health.ready;
    const lines = (kind === 'live' ? health.checks.slice(0, 1) : health.checks).map(
      (c) => `[${c.ok ? '+' : '-'}]${c.name} ${c.ok ? 'ok' : `failed: ${c.detail ?? ''}`}`,
    );
    res
      .writeHead(ok ? 200 : 503, { 'content-type': 'text/plain; charset=utf-8' })
      .end(`${lines.join('\n')}\n${kind === 'live' ? 'healthz' : 'readyz'} ${ok ? 'check passed' : 'check failed'}\n`);
  }
}
