// process_cpu_user_seconds_total, process_cpu_system_seconds_total, process_cpu_seconds_total
// as prom-client's default metrics export them (lib/metrics/processCpuTotal.js), without its
// exemplars: that file loads @opentelemetry/api for them, which Nestor loads only for tracing.
import type { Counter, Registry } from 'prom-client';

export function processCpuMetrics(registry: Registry, Counters: typeof Counter): void {
  let last = process.cpuUsage();
  const registers = [registry];
  const user = new Counters({
    name: 'process_cpu_user_seconds_total',
    help: 'Total user CPU time spent in seconds.',
    registers,
    // This one metric's collect sets all three, as prom-client's.
    collect() {
      const usage = process.cpuUsage();
      const userSeconds = (usage.user - last.user) / 1e6;
      const systemSeconds = (usage.system - last.system) / 1e6;
      last = usage;
      user.inc(userSeconds);
      system.inc(systemSeconds);
      total.inc(userSeconds + systemSeconds);
    },
  });
  const system = new Counters({
    name: 'process_cpu_system_seconds_total',
    help: 'Total system CPU time spent in seconds.',
    registers,
  });
  const total = new Counters({
    name: 'process_cpu_seconds_total',
    help: 'Total user and system CPU time spent in seconds.',
    registers,
  });
}
