/** One health check's verdict, as /readyz and the terminus indicator report it. */
export interface HealthCheck {
  name: string;
  ok: boolean;
  detail?: string;
  /**
   * Reported, failed or not, but readiness does not wait for it: a member cluster of a fleet
   * that does not answer must not take the operator (and its webhooks) out of service.
   */
  advisory?: boolean;
}

/** Readiness: every check passes that is not advisory. */
export function allReady(checks: readonly HealthCheck[]): boolean {
  return checks.every((c) => c.ok || c.advisory === true);
}

export interface ManagerHealth {
  /** The process works (liveness): false only once the manager failed or stopped. */
  live: boolean;
  /** It can do its job (readiness): caches synced and watches healthy; a standby is ready. */
  ready: boolean;
  checks: HealthCheck[];
}
