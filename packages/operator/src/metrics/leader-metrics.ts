import type { Gauge, Registry } from 'prom-client';
import { prom } from './prom-client.js';

/** client-go's leader_election_master_status: 1 while this replica holds the Lease. */
export class LeaderMetrics {
  private readonly leader: Gauge<'name'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.leader = new prom.Gauge({
      name: 'leader_election_master_status',
      help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master',
      labelNames: ['name'],
      registers,
    });
  }

  set(name: string, leading: boolean): void {
    this.leader.set({ name }, leading ? 1 : 0);
  }
}
