// What the demo shows: it polls the namespace and prints a line whenever a Memcached, its
// Deployment or an inventory ConfigMap changes, and each new Event about a Memcached.
import type { ApiClient } from '@nestor/testing';
import { RECORD_LABEL } from '../inventory/inventory.configmap.js';
import type { ConfigMapObject, DeploymentObject, EventObject } from '../kube-types.js';
import type { Memcached } from '../memcached/memcached.resource.js';
import type { Terminal } from './terminal.js';

export class ClusterView {
  private readonly shown = new Map<string, string>();
  private readonly seenEvents = new Set<string>();
  private timer?: NodeJS.Timeout;
  private polling: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly client: ApiClient,
    private readonly namespace: string,
    private readonly term: Terminal,
    private readonly intervalMs = 200,
  ) {}

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      void this.refresh().finally(() => {
        if (!this.stopped) this.timer = setTimeout(tick, this.intervalMs);
      });
    };
    tick();
  }

  /** Polls now (after any poll in progress): what the cluster shows is printed before this resolves. */
  refresh(): Promise<void> {
    this.polling = this.polling.then(() => this.poll()).catch(() => undefined); // a failed poll shows nothing new
    return this.polling;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.polling;
  }

  private async poll(): Promise<void> {
    const ns = this.namespace;
    const [memcacheds, deployments, configMaps, events] = await Promise.all([
      this.list<Memcached>(`/apis/cache.example.com/v1alpha1/namespaces/${ns}/memcacheds`),
      this.list<DeploymentObject>(`/apis/apps/v1/namespaces/${ns}/deployments`),
      this.list<ConfigMapObject>(
        `/api/v1/namespaces/${ns}/configmaps?labelSelector=${encodeURIComponent(RECORD_LABEL)}`,
      ),
      this.list<EventObject>(`/api/v1/namespaces/${ns}/events?fieldSelector=involvedObject.kind%3DMemcached`),
    ]);
    if (this.stopped) return;
    const current = new Map<string, string>();
    for (const m of memcacheds) current.set(`memcached/${m.metadata.name}`, this.memcached(m));
    for (const d of deployments) current.set(`deployment/${d.metadata?.name}`, this.deployment(d));
    for (const cm of configMaps) current.set(`configmap/${cm.metadata?.name}`, this.configMap(cm));

    for (const [label, text] of current) {
      if (this.shown.get(label) !== text) this.term.change(this.term.paint(label, 'bold'), text);
    }
    for (const label of this.shown.keys()) {
      if (!current.has(label)) this.term.change(this.term.paint(label, 'bold'), this.term.paint('deleted', 'magenta'));
    }
    this.shown.clear();
    for (const [label, text] of current) this.shown.set(label, text);

    const fresh = events
      .filter((e) => !this.seenEvents.has(e.metadata.uid!))
      .sort((a, b) => (a.lastTimestamp ?? '').localeCompare(b.lastTimestamp ?? ''));
    for (const e of fresh) {
      this.seenEvents.add(e.metadata.uid!);
      const type = this.term.paint(e.type ?? '', e.type === 'Warning' ? 'yellow' : 'blue');
      this.term.change(
        `event ${type} ${e.reason}`,
        `${e.message} ${this.term.paint(`(on ${e.involvedObject.name})`, 'dim')}`,
      );
    }
  }

  private async list<T>(path: string): Promise<T[]> {
    return (await this.client.request<{ items: T[] }>('GET', path)).items;
  }

  private memcached(m: Memcached): string {
    const t = this.term;
    const conditions = (m.status?.conditions ?? []).map((c) => {
      const healthy = c.type === 'Available' ? c.status === 'True' : c.status === 'False';
      const style = healthy ? 'green' : c.type === 'Degraded' ? 'red' : 'yellow';
      const why = c.status === 'True' && c.type !== 'Available' ? ` (${c.message})` : '';
      return t.paint(`${c.type}=${c.status}`, style) + t.paint(why, 'dim');
    });
    const generation = `generation ${m.metadata.generation} observed ${m.status?.observedGeneration ?? '-'}`;
    const deleting = m.metadata.deletionTimestamp ? t.paint(' deleting', 'magenta') : '';
    return `size ${m.spec.size} port ${m.spec.containerPort} · ${generation} · ${conditions.join(' ') || 'no status yet'}${deleting}`;
  }

  private deployment(d: DeploymentObject): string {
    const s = d.status ?? {};
    const want = d.spec?.replicas ?? 0;
    const port = d.spec?.template.spec?.containers[0]?.ports?.[0]?.containerPort;
    const ready = `ready ${s.readyReplicas ?? 0}/${want}`;
    const done = (s.readyReplicas ?? 0) === want && (s.updatedReplicas ?? 0) === want && (s.replicas ?? 0) === want;
    return `replicas ${want} · ${this.term.paint(ready, done ? 'green' : 'yellow')} · updated ${s.updatedReplicas ?? 0} · pods ${s.replicas ?? 0} · port ${port}`;
  }

  private configMap(cm: ConfigMapObject): string {
    const { name, quantity, warehouse } = cm.data ?? {};
    return `${name}: quantity ${quantity} in ${warehouse}`;
  }
}
