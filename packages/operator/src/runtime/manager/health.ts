/** One health check's verdict, as /readyz and the terminus indicator report it. */
export interface HealthCheck {
  name: string;
  ok: boolean;
  detail?: string;
}

export interface ManagerHealth {
  /** The process works (liveness): false only once the manager failed or stopped. */
  live: boolean;
  /** It can do its job (readiness): caches synced and watches healthy; a standby is ready. */
  ready: boolean;
  checks: HealthCheck[];
}
