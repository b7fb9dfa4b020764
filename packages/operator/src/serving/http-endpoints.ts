import type { HealthServerOptions, MetricsServerOptions } from './serving-options.js';

/** The options that name the metrics and probe endpoints (OperatorModule's take this shape). */
export interface HttpEndpointOptions {
  metrics?: MetricsServerOptions;
  health?: HealthServerOptions;
}

export interface MetricsEndpoint {
  port: number;
  host: string;
  secure: boolean;
  auth: boolean;
  certDir?: string;
  certName?: string;
  keyName?: string;
}

export interface HealthEndpoint {
  port: number;
  host: string;
}

/** What the operator serves over HTTP; an endpoint whose port is 0 is absent. */
export interface HttpEndpoints {
  metrics?: MetricsEndpoint;
  health?: HealthEndpoint;
}

/** The metrics and health options with their defaults, or an error that says what to change. */
export function httpEndpoints(options: HttpEndpointOptions): HttpEndpoints {
  const metricsOptions = options.metrics ?? {};
  const secure = metricsOptions.secure ?? true;
  const auth = metricsOptions.auth ?? secure;
  // kubebuilder's ports: :8443 for secure metrics, :8080 for plain HTTP.
  const metricsPort = portOf('metrics.port', metricsOptions.port ?? (secure ? 8443 : 8080), '/metrics');
  const healthPort = portOf('health.port', options.health?.port ?? 8081, 'the probes');
  if (auth && !secure) {
    throw new Error(
      'metrics.auth needs HTTPS (bearer tokens sent over plain HTTP can be read on the network): ' +
        'leave metrics.secure at its default (true), or turn auth off',
    );
  }
  if (!secure && metricsOptions.certDir) {
    throw new Error(
      'metrics.certDir is only used over HTTPS: remove it, or leave metrics.secure at its default (true)',
    );
  }
  const metrics: MetricsEndpoint | undefined =
    metricsPort > 0
      ? {
          port: metricsPort,
          host: metricsOptions.host ?? '0.0.0.0',
          secure,
          auth,
          ...(metricsOptions.certDir ? { certDir: metricsOptions.certDir } : {}),
          ...(metricsOptions.certName ? { certName: metricsOptions.certName } : {}),
          ...(metricsOptions.keyName ? { keyName: metricsOptions.keyName } : {}),
        }
      : undefined;
  const health: HealthEndpoint | undefined =
    healthPort > 0 ? { port: healthPort, host: options.health?.host ?? '0.0.0.0' } : undefined;
  if (metrics && health && metrics.port === health.port) {
    if (metrics.secure) {
      throw new Error(
        `metrics.port and health.port are both ${metrics.port}, but /metrics is served over HTTPS and ` +
          'the probes over plain HTTP (the kubelet sends no credentials): give them different ports (defaults 8443 and 8081), ' +
          'or set metrics.secure to false',
      );
    }
    if (metrics.host !== health.host) {
      throw new Error(
        `metrics and health share port ${metrics.port} but name different hosts (${metrics.host}, ${health.host}): ` +
          'a shared port has one address; set the same host on both, or give them different ports',
      );
    }
  }
  return { ...(metrics ? { metrics } : {}), ...(health ? { health } : {}) };
}

function portOf(option: string, port: number, what: string): number {
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`${option} ${port} is not a port number: use 1-65535, or 0 to turn ${what} off`);
  }
  return port;
}
