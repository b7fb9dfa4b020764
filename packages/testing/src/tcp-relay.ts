import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

/**
 * A TCP relay between a client and the API server, for half-open connection faults: after
 * silence(), every connection open at that moment stops forwarding in both directions and
 * nothing is closed (a NAT or load balancer that lost its state); connections made after
 * are forwarded again. With slow(), every byte arrives late (a slow disk or network behind
 * etcd: see TestEnvironment's `etcdRelay`). Listens on 127.0.0.1.
 */
export class TcpRelay {
  private readonly pairs = new Set<{ client: Socket; upstream: Socket; silenced: boolean }>();
  /** Partitioned: new connections are accepted and silenced too. */
  private partitioned = false;
  /** Connections accepted since start. */
  accepted = 0;
  /** Added to every chunk's way, in both directions (slow()). */
  private latencyMs = 0;

  private constructor(
    private readonly server: Server,
    /** The port it listens on, on 127.0.0.1. */
    readonly port: number,
    private target: { host: string; port: number },
  ) {}

  /** Relays 127.0.0.1:<free port> to `target` (an https:// or http:// URL, as a kubeconfig's server). */
  static async start(target: string): Promise<TcpRelay> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const relay = new TcpRelay(server, (server.address() as { port: number }).port, hostAndPort(target));
    server.on('connection', (client: Socket) => relay.accept(client));
    return relay;
  }

  /**
   * New connections go to `target` from now on (an ApiProxy serving the API server's own
   * certificate: the clients notice nothing); open ones stay where they are until closed.
   */
  retarget(target: string): void {
    this.target = hostAndPort(target);
  }

  /**
   * Closes every open connection at once, cleanly (FIN both ways), as a server going away
   * or a load balancer draining does: the clients reconnect, through `retarget`'s target.
   */
  closeAll(): void {
    for (const { client, upstream } of this.pairs) {
      client.end();
      upstream.end();
    }
  }

  /** The relay's address, in place of the API server's. */
  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  /** The relay's address for a plain-HTTP target (etcd). */
  get httpUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** A copy of `kubeConfig` whose current cluster is reached through this relay. */
  kubeConfig(kubeConfig: KubeConfig): KubeConfig {
    const current = kubeConfig.getCurrentCluster();
    if (!current) throw new Error('the kubeconfig has no current cluster to relay');
    const relayed = new KubeConfig();
    relayed.loadFromOptions({
      clusters: kubeConfig.clusters.map((c) => (c.name === current.name ? { ...c, server: this.url } : c)),
      users: kubeConfig.users,
      contexts: kubeConfig.contexts,
      currentContext: kubeConfig.currentContext,
    });
    return relayed;
  }

  /** Every open connection stops forwarding, silently: nothing is closed, nothing arrives. */
  silence(): void {
    for (const pair of this.pairs) pair.silenced = true;
  }

  /** A partition: every connection, open now or made later, forwards nothing until heal(). */
  partition(): void {
    this.partitioned = true;
    this.silence();
  }

  /**
   * Every chunk, in both directions and on every connection, is delivered `latencyMs` late,
   * in order; 0 ends it (what is on its way still arrives late). Nothing is dropped.
   */
  slow(latencyMs: number): void {
    if (!(latencyMs >= 0)) throw new RangeError(`slow() needs a latency >= 0 ms (got ${latencyMs})`);
    this.latencyMs = latencyMs;
  }

  /** Ends a partition: new connections are forwarded again (the silenced ones stay dead, as after a real one). */
  heal(): void {
    this.partitioned = false;
  }

  async close(): Promise<void> {
    for (const { client, upstream } of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
    this.pairs.clear();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    this.accepted++;
    // No Nagle on either side, as a kernel NAT or a proxy such as Envoy: a relay that held small
    // writes for the peer's delayed ACK stalled every HTTP/2 connection through it (many small
    // frames in flight at once) ~40 ms at a time, capping its reconciles at ~150/s.
    client.setNoDelay(true);
    const upstream = createConnection({ ...this.target, noDelay: true });
    const pair = { client, upstream, silenced: this.partitioned };
    this.pairs.add(pair);
    const timers = new Set<() => void>();
    const forward = (from: Socket, to: Socket) => {
      // Chunks held back by slow(), each with its due time; one timer for the head keeps them in order.
      const held: { chunk: Buffer; due: number }[] = [];
      let timer: NodeJS.Timeout | undefined;
      const flush = () => {
        timer = undefined;
        const now = Date.now();
        while (held.length > 0 && held[0]!.due <= now) {
          const { chunk } = held.shift()!;
          if (!pair.silenced && !to.destroyed) to.write(chunk);
        }
        if (held.length > 0) timer = setTimeout(flush, held[0]!.due - now);
      };
      timers.add(() => clearTimeout(timer));
      from.on('data', (chunk: Buffer) => {
        if (pair.silenced) return;
        if (this.latencyMs === 0 && held.length === 0) {
          to.write(chunk);
          return;
        }
        held.push({ chunk, due: Math.max(Date.now() + this.latencyMs, held.at(-1)?.due ?? 0) });
        timer ??= setTimeout(flush, held[0]!.due - Date.now());
      });
    };
    forward(client, upstream);
    forward(upstream, client);
    const end = () => {
      this.pairs.delete(pair);
      for (const clear of timers) clear();
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  }
}

function hostAndPort(target: string): { host: string; port: number } {
  const url = new URL(target);
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
  };
}
