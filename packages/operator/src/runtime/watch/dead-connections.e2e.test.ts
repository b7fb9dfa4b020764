import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1ConfigMap } from '../../client/kinds.js';
import { silentLogger, Transport, type KubeObject, type TransportOptions } from '@nestor/core';
import { parallel, TcpRelay, TestEnvironment, waitFor } from '@nestor/testing';
import { HttpKubeClient } from '../../client/http-kube-client.js';
import { ConfigMap } from '../../client/kinds.js';
import { configMapsPath, createConfigMap, patchConfigMap } from '../../test-support/e2e-helpers.js';
import { Manager } from '../manager/manager.js';

// Half-open connections: a middlebox drops every connection without closing any. Before,
// a watch on such a connection waited for its stall timeout (its watch timeout + 60 s: 6 to
// 11 minutes) and requests timed out one pooled socket after another; an operator behind
// such a relay converged on 0 of 500 changes in 240 s. By default the transport speaks
// HTTP/2 and its PING finds the dead connection within 15 s of its last data; over HTTP/1.1 the watch's
// stall limit (DEFAULT_WATCH_STALL_MS, from the API server's bookmark period) does.

// A reconcile's signal aborts on its timeout, a lost lease and shutdown past the grace
// period; the user need not pass it on: KubeClient's requests inside the reconcile carry it.
// Before, a request on a dead connection kept the aborted reconcile (and its object) held
// until the request's own deadline, 60 s later.

let env: TestEnvironment;
/** One relay per test: silencing one must not touch another test's connections. */
const relays = {
  open: [] as TcpRelay[],
  async start(): Promise<TcpRelay> {
    const relay = await TcpRelay.start(env.server);
    this.open.push(relay);
    return relay;
  },
};
before(async () => {
  env = await TestEnvironment.start();
});
after(async () => {
  await Promise.all(relays.open.map((r) => r.close()));
  await env?.stop();
});

/**
 * 20 ConfigMaps reconciled by a manager behind a relay (each reconcile reads its object
 * through the API too: requests must find a live connection, not only the watch); every
 * connection is silenced, every object changed; resolves once the changes are reconciled.
 */
async function silencedThenChanged(prefix: string, options: TransportOptions, boundMs: number): Promise<Transport> {
  const namespace = await env.createNamespace(prefix);
  const relay = await relays.start();
  const names = Array.from({ length: 20 }, (_, i) => `cm-${i}`);
  await parallel(names, 8, (name) => createConfigMap(env.client, namespace, name, { data: { v: '1' } }));

  const transport = await Transport.fromKubeConfig(relay.kubeConfig(env.kubeConfig), options);
  const manager = new Manager({ transport });
  const seen = new Map<string, string>();
  manager.addController<V1ConfigMap & KubeObject>({
    name: prefix,
    resource: ConfigMap,
    namespace,
    maxConcurrentReconciles: 4,
    reconcile: async ({ object, signal }) => {
      const fresh = await transport.json<V1ConfigMap>('GET', configMapsPath(namespace, object!.metadata!.name!), {
        signal,
      });
      seen.set(fresh.metadata!.name!, fresh.data?.['v'] ?? '');
    },
  });
  await manager.start();
  try {
    await waitFor(() => names.every((n) => seen.get(n) === '1'), { timeoutMs: 30_000, what: 'the first reconciles' });
    const connectionsBefore = relay.accepted;
    const protocol = transport.protocol;
    relay.silence();
    await parallel(names, 8, (name) => patchConfigMap(env.client, namespace, name, { data: { v: '2' } }));
    await waitFor(() => names.every((n) => seen.get(n) === '2'), {
      timeoutMs: boundMs,
      intervalMs: 500,
      what: `every change made after the connections (${protocol}) went silent to be reconciled`,
    });
    assert.ok(relay.accepted > connectionsBefore, 'new connections replaced the silent ones');
    return transport;
  } finally {
    await manager.stop();
    transport.close();
  }
}

// The two wait for their protocol's limits (up to a minute each), side by side.
describe('connections that die without closing', { concurrency: true }, () => {
  it('with the defaults (HTTP/2, checked by PING): found, replaced, and the changes made meanwhile reconciled', async () => {
    // No option at all, as a user starts it: 5 s of silence sends a PING, 10 s without its
    // answer closes the connection. The bound leaves room for a loaded machine.
    const transport = await silencedThenChanged('half-open', {}, 120_000);
    assert.equal(transport.protocol, 'h2');
  });

  it('over HTTP/1.1 (http2: false): found by the watch stall limit and the request deadline', async () => {
    // The watch's stall limit (its timeout + 10 s, DEFAULT_WATCH_STALL_MS at most) and a
    // short request deadline, whose expiry drops the pool's idle sockets.
    const transport = await silencedThenChanged('half-open-h1', { http2: false, requestTimeoutMs: 5_000 }, 150_000);
    assert.equal(transport.protocol, 'http/1.1');
  });
});

describe('a silenced HTTP/2 connection', () => {
  it('is found dead by PING, and the watches and reconciles resume on a new one', async () => {
    const namespace = await env.createNamespace('h2-ping');
    const relay = await relays.start();
    const names = Array.from({ length: 10 }, (_, i) => `cm-${i}`);
    await parallel(names, 8, (name) => createConfigMap(env.client, namespace, name, { data: { v: '1' } }));
    // Short liveness limits (client-go: 30 s idle, 15 s for the answer), so the test proves the
    // PING and not the watch's own stall limit (70 s) or its server-side timeout (25-50 s).
    const transport = await Transport.fromKubeConfig(relay.kubeConfig(env.kubeConfig), {
      http2: true,
      http2ReadIdleMs: 1_000,
      http2PingTimeoutMs: 1_000,
    });
    const manager = new Manager({ transport });
    const seen = new Map<string, string>();
    manager.addController<V1ConfigMap & KubeObject>({
      name: 'h2-ping',
      resource: ConfigMap,
      namespace,
      reconcile: ({ object }) => {
        seen.set(object!.metadata!.name!, object!.data?.['v'] ?? '');
        return Promise.resolve();
      },
    });
    await manager.start();
    try {
      await waitFor(() => names.every((n) => seen.get(n) === '1'), { timeoutMs: 30_000, what: 'the first reconciles' });
      assert.equal(transport.protocol, 'h2');
      const connectionsBefore = relay.accepted;
      const silencedAt = Date.now();
      relay.silence();
      await parallel(names, 8, (name) => patchConfigMap(env.client, namespace, name, { data: { v: '2' } }));
      await waitFor(() => names.every((n) => seen.get(n) === '2'), {
        timeoutMs: 20_000,
        intervalMs: 200,
        what: 'the changes made after the connection went silent, seen over a new one',
      });
      assert.ok(relay.accepted > connectionsBefore, 'a new connection replaced the silent one');
      assert.ok(Date.now() - silencedAt < 20_000);
    } finally {
      await manager.stop();
      transport.close();
    }
  });
});

describe('a silenced HTTP/2 connection beside a live one', () => {
  it('is closed once a request on a new connection is answered, without waiting out the PING', async () => {
    const namespace = await env.createNamespace('h2-sibling');
    const relay = await relays.start();
    await createConfigMap(env.client, namespace, 'cm', { data: { v: '1' } });
    const warnings: string[] = [];
    // The defaults (PING after 5 s idle, 10 s for its answer) and a short request deadline.
    const transport = await Transport.fromKubeConfig(relay.kubeConfig(env.kubeConfig), {
      requestTimeoutMs: 2_000,
      logger: { ...silentLogger, warn: (message) => warnings.push(message) },
    });
    const watching = new AbortController();
    try {
      const seen: unknown[] = [];
      const watch = (async () => {
        try {
          for await (const event of transport.stream(configMapsPath(namespace), { watch: true }, watching.signal))
            seen.push(event);
          return new Error('the watch ended');
        } catch (error) {
          return error as Error;
        }
      })();
      await waitFor(() => seen.length > 0, { timeoutMs: 15_000, what: 'the watch to start' });
      relay.silence();
      // No answer: the connection is suspect and PINGed, new requests take a new connection.
      await assert.rejects(transport.json('GET', configMapsPath(namespace, 'cm')), { reason: 'Timeout' });
      const closed = await waitFor(
        async () => {
          await transport.json('GET', configMapsPath(namespace, 'cm'));
          return warnings.find((w) => w.includes('closed: no answer to an HTTP/2 PING'));
        },
        { timeoutMs: 30_000, intervalMs: 250, what: 'the silent connection to be closed' },
      );
      assert.match(closed, /another connection to the server answered meanwhile/);
      // Its watch failed with it (and a watcher reconnects at once), not when its own PING's 10 s ran out.
      assert.match((await watch).message, /PING/);
      assert.equal(relay.accepted, 2, 'the silent connection and the one that replaced it');
    } finally {
      watching.abort();
      transport.close();
    }
  });
});

describe('an aborted reconcile', () => {
  it('cuts the KubeClient requests it made, without being handed the signal', async () => {
    const namespace = await env.createNamespace('abort');
    const relay = await relays.start();
    await createConfigMap(env.client, namespace, 'stuck');
    const transport = await Transport.fromKubeConfig(relay.kubeConfig(env.kubeConfig));
    const manager = new Manager({ transport });
    const kube = new HttpKubeClient(transport, { informers: manager.informers });
    const settled: string[] = [];
    let silenced = false;
    manager.addController<V1ConfigMap & KubeObject>({
      name: 'abort',
      resource: ConfigMap,
      namespace,
      reconcileTimeoutMs: 1_000,
      reconcile: async ({ object }) => {
        if (!silenced) {
          silenced = true;
          relay.silence(); // this request, and every open connection, now hangs
        }
        try {
          await kube.patch(ConfigMap, { namespace, name: object!.metadata!.name! }, { data: { touched: 'yes' } });
          settled.push('written');
        } catch (error) {
          settled.push((error as Error).message);
          throw error;
        }
      },
    });
    await manager.start();
    try {
      // The timeout aborts the reconcile at 1 s; its hanging request must end with it, not at
      // the transport's 60 s deadline.
      const first = await waitFor(() => settled[0], { timeoutMs: 15_000, what: 'the aborted request to end' });
      assert.match(first, /did not finish within its timeout of 1000 ms/);
    } finally {
      await manager.stop();
      transport.close();
    }
  });
});
