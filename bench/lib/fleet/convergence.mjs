// The bench's own view of the member API servers (bench/fleet.mjs): one informer of every
// Widget per server, with admin credentials, so convergence is seen from outside and the
// same way for every framework. A Widget has converged on a round when its spec carries the
// round the bench last wrote and its status.observedGeneration is its generation (the
// operator reconciled that change). Each event costs O(1): a member keeps the count of its
// converged Widgets; a new round recounts once, from the cache's namespace index.
import { InformerCache, Transport } from '@nestor/operator/runtime';
import { WIDGETS } from '../common.mjs';

const convergedOn = (widget, round) =>
  widget.spec?.round === round && widget.status?.observedGeneration === widget.metadata?.generation;

export class ConvergenceWatch {
  /** `envs`: the member API servers (TestEnvironment). */
  static async start(envs) {
    const servers = await Promise.all(
      envs.map(async (env) => {
        const transport = await Transport.fromKubeConfig(env.kubeConfig);
        const cache = new InformerCache(transport);
        const { informer } = cache.acquire(WIDGETS);
        await informer.whenSynced();
        return { transport, cache, informer, members: new Map(), objects: new Map() };
      }),
    );
    return new ConvergenceWatch(servers);
  }

  constructor(servers) {
    this.servers = servers;
    for (const server of servers) {
      server.informer.events$.subscribe(({ type, object }) => {
        if (type !== 'deleted') this.seen(server, object);
      });
    }
  }

  /**
   * Follows the Widgets of namespace `namespace` on server `server` as one member from now on,
   * converged on `round` (the round its Widgets were just written with). Returns its tracker:
   * `converged` (the count), `firstAt` and `doneAt` (performance.now() when the first and
   * when all `total` converged).
   */
  follow(server, namespace, round, total) {
    const s = this.servers[server];
    const tracker = {
      namespace,
      round,
      total,
      converged: 0,
      state: new Map(),
      firstAt: undefined,
      doneAt: undefined,
      waiters: [],
    };
    for (const widget of s.informer.list(namespace)) {
      const ok = convergedOn(widget, round);
      tracker.state.set(widget.metadata.name, ok);
      if (ok) tracker.converged++;
    }
    s.members.set(namespace, tracker);
    this.check(tracker);
    return tracker;
  }

  /** Stops following a namespace. */
  forget(server, namespace) {
    this.servers[server].members.delete(namespace);
  }

  /** Resolves with the time (performance.now()) when every Widget of `tracker` has converged, or rejects after `timeoutMs`. */
  whenDone(tracker, timeoutMs, what) {
    if (tracker.doneAt !== undefined) return Promise.resolve(tracker.doneAt);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error(`${what}: ${tracker.converged} of ${tracker.total} Widgets converged in ${timeoutMs} ms`)),
        timeoutMs,
      );
      tracker.waiters.push((at) => {
        clearTimeout(timer);
        resolve(at);
      });
    });
  }

  /** Resolves with the time when Widget `namespace/name` has converged on `round`. */
  whenObjectConverged(server, namespace, name, round, timeoutMs) {
    const s = this.servers[server];
    const key = `${namespace}/${name}`;
    const current = s.informer.get(key);
    if (current && convergedOn(current, round)) return Promise.resolve(performance.now());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        s.objects.delete(key);
        reject(new Error(`Widget ${key} not converged on round ${round} in ${timeoutMs} ms`));
      }, timeoutMs);
      s.objects.set(key, {
        round,
        resolve: (at) => {
          clearTimeout(timer);
          resolve(at);
        },
      });
    });
  }

  seen(server, widget) {
    const { namespace, name } = widget.metadata;
    const waiter = server.objects.get(`${namespace}/${name}`);
    if (waiter && convergedOn(widget, waiter.round)) {
      server.objects.delete(`${namespace}/${name}`);
      waiter.resolve(performance.now());
    }
    const tracker = server.members.get(namespace);
    if (!tracker) return;
    const ok = convergedOn(widget, tracker.round);
    const was = tracker.state.get(name) ?? false;
    if (ok === was) return;
    tracker.state.set(name, ok);
    tracker.converged += ok ? 1 : -1;
    this.check(tracker);
  }

  check(tracker) {
    if (tracker.firstAt === undefined && tracker.converged > 0) tracker.firstAt = performance.now();
    if (tracker.doneAt !== undefined || tracker.converged < tracker.total) return;
    tracker.doneAt = performance.now();
    for (const waiter of tracker.waiters.splice(0)) waiter(tracker.doneAt);
  }

  close() {
    for (const server of this.servers) {
      server.cache.stopAll();
      server.transport.close();
    }
  }
}
