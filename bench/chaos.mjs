#!/usr/bin/env node
// npm run chaos: Nestor under faults. A private control plane with its audit log on, two
// replicas of an operator on the public Nest API (packages/operator/src/test-support/
// lease-operator.ts: reconciles ConfigMaps, writes what it saw through KubeClient) with
// leader election, each talking to the API server through its own TcpRelay and as its own
// ServiceAccount. Faults while it works; after each, every object's spec changes and the
// time until all have converged is measured. At the end: no two reconciles of one object at
// once across replicas, and no write from a replica while another held the lease (from the
// audit log). Not part of npm test.
//   node bench/chaos.mjs [--objects 2000] [--workers 8] [--out FILE]
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { parallel, TcpRelay, TestEnvironment } from '@nestor/testing';
import { OperatorProcess } from '../packages/operator/dist/test-support/operator-process.js';
import {
  overlappingReconciles,
  reconcileIntervals,
} from '../packages/operator/dist/test-support/reconcile-intervals.js';
import { controllerRuntimeVersion, ensureGoOperator } from './lib/go-build.mjs';

const { values } = parseArgs({
  options: {
    objects: { type: 'string', default: '2000' },
    workers: { type: 'string', default: '8' },
    impls: { type: 'string', default: 'nestor,controller-runtime' },
    out: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(
    'node bench/chaos.mjs [--objects 2000] [--workers 8] [--impls nestor,controller-runtime] [--out FILE]   (build first: npm run chaos)',
  );
  process.exit(0);
}
const N = Number(values.objects);
const WORKERS = Number(values.workers);
// Shorter than the defaults (15 s / 10 s / 2 s) so the leader faults finish in seconds.
const LEASE = { leaseDurationMs: 6_000, renewDeadlineMs: 4_000, retryPeriodMs: 1_000 };
const CONVERGE_BOUND_MS = 300_000;
const here = dirname(fileURLToPath(import.meta.url));
const log = (line) => console.error(`[chaos ${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${line}`);
const t0 = Date.now();

async function runSuite(impl, goBinary) {
  const env = await TestEnvironment.start({ useExistingCluster: false, auditLog: true });
  const processes = [];
  const relays = [];
  let stopping = false;
  let restarts = 0;
  try {
    const namespace = await env.createNamespace('chaos');
    const dir = join(os.tmpdir(), `nestor-chaos-${process.pid}`);
    await mkdir(dir, { recursive: true });

    /** One replica slot: its ServiceAccount (its own user in the audit log), its relay, its process. */
    async function slot(name) {
      await env.client.request('POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, { metadata: { name } });
      await env.client.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
        metadata: { name: `${namespace}-${name}` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ kind: 'ServiceAccount', name, namespace }],
      });
      const { status } = await env.client.request(
        'POST',
        `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
        { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 86_400 } },
      );
      const relay = await TcpRelay.start(env.server);
      relays.push(relay);
      const cluster = env.kubeConfig.getCurrentCluster();
      const kubeConfig = new KubeConfig();
      kubeConfig.loadFromOptions({
        clusters: [{ name: 'chaos', server: relay.url, caData: cluster.caData, skipTLSVerify: false }],
        users: [{ name, token: status.token }],
        contexts: [{ name: 'chaos', cluster: 'chaos', user: name }],
        currentContext: 'chaos',
      });
      const kubeconfigPath = join(dir, `${name}.kubeconfig`);
      await writeFile(kubeconfigPath, kubeConfig.exportConfig(), { mode: 0o600 });
      const s = {
        name,
        user: `system:serviceaccount:${namespace}:${name}`,
        relay,
        kubeconfigPath,
        process: undefined,
        generation: 0,
      };
      s.start = () => {
        s.generation++;
        s.process = new OperatorProcess({
          kubeconfigPath,
          namespace,
          identity: `${name}-${s.generation}`,
          leaseId: 'chaos-operator',
          workers: WORKERS,
          ...LEASE,
          ...(impl === 'controller-runtime' ? { executable: { file: goBinary, env: { NESTOR_CHAOS: '1' } } } : {}),
        });
        processes.push(s.process);
        // As kubelet does: a replica that exits (it lost the lease, it was killed) starts again.
        const started = s.process;
        void started.exited.then(() => {
          if (stopping || s.process !== started) return;
          restarts++;
          setTimeout(() => !stopping && s.process === started && s.start(), 1_000);
        });
        return s.process;
      };
      return s;
    }

    const path = (name = '') => `/api/v1/namespaces/${namespace}/configmaps${name ? `/${name}` : ''}`;
    const names = Array.from({ length: N }, (_, i) => `cm-${i}`);
    log(`creating ${N} ConfigMaps`);
    await parallel(names, 32, (name) =>
      env.client.request('POST', path(), { metadata: { name }, data: { v: '0', write: 'yes' } }),
    );
    const slots = [await slot('replica-a'), await slot('replica-b')];
    for (const s of slots) s.start();

    /** The slot whose user wrote the Lease last (from the audit log: holder identities differ by implementation). */
    async function leader() {
      const users = new Map(slots.map((s) => [s.user, s]));
      const writes = (await env.auditEvents()).filter(
        (e) => e.objectRef?.resource === 'leases' && (e.responseStatus?.code ?? 0) < 300 && users.has(e.user.username),
      );
      const last = writes.at(-1);
      if (!last) throw new Error('no replica has written the Lease yet');
      return users.get(last.user.username);
    }

    /** Changes every object's spec (data.v); retried while the API server is away. */
    async function bump(v) {
      await parallel(names, 32, async (name) => {
        for (let attempt = 0; ; attempt++) {
          try {
            return await env.client.request(
              'PATCH',
              path(name),
              { data: { v: String(v) } },
              'application/merge-patch+json',
            );
          } catch (error) {
            if (attempt > 100) throw error;
            await new Promise((r) => setTimeout(r, 200));
          }
        }
      });
    }

    /** Ms from `since` until every object's nestor.test/observed annotation is v. */
    async function converged(v, since) {
      for (;;) {
        const list = await env.client.request('GET', path()).catch(() => undefined);
        const done =
          list?.items.filter((cm) => cm.metadata.annotations?.['nestor.test/observed'] === String(v)).length ?? 0;
        if (done === N) return Date.now() - since;
        if (Date.now() - since > CONVERGE_BOUND_MS) {
          throw new Error(`only ${done} of ${N} objects converged on v=${v} within ${CONVERGE_BOUND_MS} ms`);
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    }

    const results = [];
    async function round(v, fault, inject) {
      log(`v=${v}: ${fault}`);
      const recovered = await inject();
      const bumpedAt = Date.now();
      await bump(v);
      const ms = await converged(v, recovered ?? bumpedAt);
      results.push({ v, fault, convergedSeconds: ms / 1000 });
      log(`v=${v}: all ${N} converged ${(ms / 1000).toFixed(1)} s after the fault ended`);
    }

    await round(1, 'none (first reconcile of every object, then a spec change)', async () => {
      await converged(0, Date.now()).catch(() => undefined);
    });
    await round(2, 'API server killed, down 3 s, restarted', async () => {
      await env.restartApiServer({ kill: true, downtimeMs: 3_000 });
      return Date.now();
    });
    await round(3, 'etcd compacted (the API server restarted to drop its watch cache)', async () => {
      await env.compactEtcd();
      return Date.now();
    });
    await round(4, 'the leader SIGKILLed and started again while the API server restarts', async () => {
      const lead = await leader();
      const killed = lead.process;
      killed.signal('SIGKILL');
      const restart = env.restartApiServer({ kill: true, downtimeMs: 2_000 });
      await killed.exited; // the supervisor starts it again, during the restart
      await restart;
      return Date.now();
    });
    await round(
      5,
      'every connection of the leader silently dropped (a relay stops forwarding, closes nothing)',
      async () => {
        const lead = await leader();
        lead.relay.silence();
        return Date.now();
      },
    );
    let partitioned;
    await round(6, 'the leader partitioned from the API server while the standby runs', async () => {
      partitioned = await leader();
      partitioned.relay.partition();
      return Date.now();
    });
    partitioned.relay.heal();

    // The record: no overlapping reconciles, no write while another replica held the lease.
    const intervals = await reconcileIntervals(processes);
    const overlapping = overlappingReconciles(intervals);
    const overlaps = overlapping.length;
    const overlapSamples = overlapping.slice(0, 5);
    const audit = await env.auditEvents();
    const users = new Map(slots.map((s) => [s.user, s.name]));
    const ok = (e) => (e.responseStatus?.code ?? 0) < 300;
    const leaseWrites = audit
      .filter(
        (e) =>
          e.objectRef?.resource === 'leases' &&
          e.objectRef?.name === 'chaos-operator' &&
          ok(e) &&
          users.has(e.user.username),
      )
      .map((e) => ({ at: Date.parse(e.stageTimestamp), who: users.get(e.user.username) }))
      .sort((a, b) => a.at - b.at);
    const writes = audit.filter(
      (e) =>
        e.objectRef?.resource === 'configmaps' &&
        e.objectRef?.namespace === namespace &&
        e.verb === 'patch' &&
        ok(e) &&
        users.has(e.user.username),
    );
    let fenced = 0;
    for (const w of writes) {
      const at = Date.parse(w.requestReceivedTimestamp);
      const holder = leaseWrites.filter((l) => l.at <= at).at(-1);
      if (holder && holder.who !== users.get(w.user.username)) fenced++;
    }
    const reconciles = intervals.length;
    const summary = {
      objects: N,
      workers: WORKERS,
      lease: LEASE,
      results,
      reconciles,
      restarts,
      overlaps,
      overlapSamples,
      writes: writes.length,
      writesWithoutLease: fenced,
      machine: { cpus: os.cpus().length, node: process.version },
    };
    return summary;
  } catch (error) {
    for (const p of processes) console.error(`--- ${p.identity}:\n${p.tail(20)}`);
    throw error;
  } finally {
    stopping = true;
    await Promise.all(processes.map((p) => p.dispose()));
    await Promise.all(relays.map((r) => r.close()));
    await env.stop();
  }
}

const summaries = [];
let failed = false;
for (const impl of values.impls.split(',')) {
  const goBinary = impl === 'controller-runtime' ? await ensureGoOperator({ onProgress: log }) : undefined;
  log(`--- ${impl}`);
  try {
    summaries.push({ impl, ...(await runSuite(impl, goBinary)) });
  } catch (error) {
    console.error(error);
    failed = true;
  }
}
const label = { nestor: 'Nestor', 'controller-runtime': `controller-runtime ${controllerRuntimeVersion()}` };
const faults = summaries[0]?.results ?? [];
const table = [
  `## Chaos run ${new Date().toISOString()}: ${N} objects, 2 replicas, ${WORKERS} workers, lease ${LEASE.leaseDurationMs / 1000} s`,
  '',
  `| spec change | fault before it | ${summaries.map((s) => label[s.impl]).join(' | ')} |`,
  `|---:|---|${summaries.map(() => '---:').join('|')}|`,
  ...faults.map(
    (f, i) =>
      `| v=${f.v} | ${f.fault} | ${summaries.map((s) => `${s.results[i]?.convergedSeconds.toFixed(1) ?? '–'} s`).join(' | ')} |`,
  ),
  '',
  ...summaries.map(
    (s) =>
      `${label[s.impl]}: ${s.reconciles} reconciles; ${s.restarts} replica restarts (after a lost lease or a kill, as kubelet would); two replicas reconciling one object at once: ${s.overlaps}; ${s.writes} writes, from a replica while another held the lease: ${s.writesWithoutLease}.`,
  ),
].join('\n');
console.log(table);
const out = values.out ?? join(here, 'results', `chaos-${new Date().toISOString().slice(0, 16).replace(':', '')}.json`);
await writeFile(out, JSON.stringify(summaries, null, 2));
await writeFile(out.replace(/\.json$/, '.md'), `${table}\n`);
log(`results: ${out}`);
if (failed || summaries.some((s) => s.overlaps || s.writesWithoutLease)) process.exitCode = 1;
