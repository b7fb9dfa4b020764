import type { Registry } from 'prom-client';
import { prom } from './prom-client.js';
import type { MemberStatus } from '../runtime/fleet/fleet.js';

const PHASES = ['connecting', 'engaged', 'failed'] as const;

/**
 * The member clusters of a fleet, read when scraped: each one's phase (1 on the phase it is
 * in), whether its API server is out (its reconciles held), and the engagement attempts of
 * its current streak. Their controllers report under `<controller>@<cluster>`.
 */
export class FleetMetrics {
  private source: () => readonly MemberStatus[] = () => [];

  constructor(registry: Registry) {
    const registers = [registry];
    // A member spread to another replica is that replica's to report.
    const read = () => this.source().filter((member) => member.phase !== 'elsewhere');
    new prom.Gauge({
      name: 'nestor_fleet_member_cluster',
      help: 'Member clusters of the fleet by phase (connecting, engaged, failed): 1 on the phase each is in',
      labelNames: ['cluster', 'phase'],
      registers,
      collect() {
        this.reset();
        for (const member of read()) {
          for (const phase of PHASES) this.set({ cluster: member.name, phase }, member.phase === phase ? 1 : 0);
        }
      },
    });
    new prom.Gauge({
      name: 'nestor_fleet_member_held',
      help: 'Whether a member cluster’s reconciles are held because its API server does not answer',
      labelNames: ['cluster'],
      registers,
      collect() {
        this.reset();
        for (const member of read()) this.set({ cluster: member.name }, member.held ? 1 : 0);
      },
    });
    new prom.Gauge({
      name: 'nestor_fleet_member_engage_attempts',
      help: 'Engagement attempts of a member cluster since it was named (1 once engaged at the first)',
      labelNames: ['cluster'],
      registers,
      collect() {
        this.reset();
        for (const member of read()) this.set({ cluster: member.name }, member.attempts);
      },
    });
  }

  track(source: () => readonly MemberStatus[]): void {
    this.source = source;
  }
}
