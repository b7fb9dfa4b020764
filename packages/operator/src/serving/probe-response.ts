import type { HealthCheck, ManagerHealth } from '../runtime/manager/manager.js';
import { allReady } from '../runtime/manager/health.js';

export type Probe = 'healthz' | 'readyz';

/**
 * The answer to a kubelet probe, in kube-apiserver's format: `ok` when every check passes,
 * else each check as `[+]name ok` or `[-]name failed` and a last line; `?verbose` lists the
 * checks on success too, and so does a success with an advisory check failing (a member
 * cluster down). Never why a check failed: probe ports are unauthenticated, and a
 * watch's error names resources, users and addresses (the caller logs it instead).
 */
export function probeResponse(probe: Probe, health: ManagerHealth, verbose: boolean): { status: number; body: string } {
  const checks = probeChecks(probe, health);
  const ok = allReady(checks);
  if (ok && !verbose && checks.every((c) => c.ok)) return { status: 200, body: 'ok\n' };
  const lines = checks.map((c) =>
    c.ok ? `[+]${c.name} ok` : `[-]${c.name} failed${c.advisory ? ' (advisory: readiness does not wait for it)' : ''}`,
  );
  return { status: ok ? 200 : 503, body: `${lines.join('\n')}\n${probe} check ${ok ? 'passed' : 'failed'}\n` };
}

/**
 * Readiness: the manager and every informer. Liveness: the manager alone, passing while it
 * runs or starts (a starting manager is alive, not yet ready).
 */
export function probeChecks(probe: Probe, health: ManagerHealth): HealthCheck[] {
  if (probe === 'readyz') return health.checks;
  const manager = health.checks[0];
  return [
    { name: manager?.name ?? 'manager', ok: health.live, ...(manager?.detail ? { detail: manager.detail } : {}) },
  ];
}
