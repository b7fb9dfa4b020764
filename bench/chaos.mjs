#!/usr/bin/env node
// npm run chaos: Nestor under faults, beside controller-runtime doing the same work. A
// private control plane with its audit log on; an operator on the public Nest API
// (packages/operator/src/test-support/lease-operator.ts: reconciles ConfigMaps, writes what
// it saw through KubeClient, with leader election), or its controller-runtime peer
// (bench/controller-runtime, chaos.go), each process talking to the API server through its
// own TcpRelay and as its own ServiceAccount. Two ways of running it (--mode):
//   single    one process as a user starts it: the framework's defaults (lease 15 s / 10 s /
//             2 s), no standby, NODE_OPTIONS as the generated Deployment sets it
//   replicas  two processes, short lease timings (6 s / 4 s / 1 s) so leader faults take seconds
// The faults are files in bench/lib/chaos/ (see its index.mjs for what one exports and the
// context it gets). After each, every object's spec changes and the time from the end of the
// fault until all have converged is measured; each fault starts on an idle operator (no
// reconcile for a second: the echoes of the last row's own writes done); --repeat runs each fault that many times and
// reports the median and the worst. The implementations run side by side, each on its own
// control plane, taking turns fault by fault (class Turns). At the end: no two reconciles of one object at once
// across processes, and no write from a process while another held the lease (from the
// audit log). Not part of npm test.
//   node bench/chaos.mjs [--mode single,replicas] [--faults a,b] [--repeat 1] [--objects 2000]
//                        [--workers 8] [--impls nestor,controller-runtime] [--out FILE]
//   CHAOS_KEEP_OUTPUT=dir keeps every operator process's output, line by line with its time.
import { mkdir, writeFile } from 'node:fs/promises';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { parallel, TcpRelay, TestEnvironment } from '@nestor/testing';
import { OPERATOR_NODE_OPTIONS } from '../packages/operator/dist/manifests/deployment.js';
import { OperatorProcess } from '../packages/operator/dist/test-support/operator-process.js';
import {
  overlappingReconciles,
  reconcileIntervals,
} from '../packages/operator/dist/test-support/reconcile-intervals.js';
import { controllerRuntimeVersion, ensureGoOperator } from './lib/go-build.mjs';
import { loadFaults } from './lib/chaos/index.mjs';
import { median } from './lib/common.mjs';
import { chaosCharts, writeCharts } from './lib/report-charts.mjs';

const { values } = parseArgs({
  options: {
    mode: { type: 'string', default: 'single,replicas' },
    faults: { type: 'string' },
    repeat: { type: 'string', default: '1' },
    objects: { type: 'string', default: '2000' },
    workers: { type: 'string', default: '8' },
    impls: { type: 'string', default: 'nestor,controller-runtime' },
    out: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
const allFaults = await loadFaults();
if (values.help) {
  console.log(
    [
      'node bench/chaos.mjs [--mode single,replicas] [--faults a,b] [--repeat 1] [--objects 2000] [--workers 8]',
      '                     [--impls nestor,controller-runtime] [--out FILE]   (build first: npm run chaos)',
      'faults (bench/lib/chaos/):',
      ...allFaults.map((f) => `  ${f.name.padEnd(24)} ${f.modes.join(',').padEnd(16)} ${f.title}`),
    ].join('\n'),
  );
  process.exit(0);
}
const N = Number(values.objects);
const WORKERS = Number(values.workers);
const REPEAT = Math.max(1, Number(values.repeat));
const MODES = values.mode.split(',');
for (const mode of MODES) if (!['single', 'replicas'].includes(mode)) throw new Error(`unknown --mode ${mode}`);
const chosen = values.faults?.split(',');
for (const name of chosen ?? []) {
  if (!allFaults.some((f) => f.name === name)) throw new Error(`no fault named ${name} in bench/lib/chaos/`);
}
/** How each mode runs the operator: its processes and the timings and environment they get. */
const MODE = {
  // Shorter than the defaults (15 s / 10 s / 2 s) so the leader faults finish in seconds.
  replicas: {
    replicas: 2,
    lease: { leaseDurationMs: 6_000, renewDeadlineMs: 4_000, retryPeriodMs: 1_000 },
    env: {},
  },
  // As a user runs it: the defaults, one process, V8 sized as the generated Deployment.
  single: { replicas: 1, lease: {}, env: { NODE_OPTIONS: OPERATOR_NODE_OPTIONS } },
};
const CONVERGE_BOUND_MS = 300_000;
/**
 * A row ends when the operator is idle, not when the last object converged: its own writes
 * still echo (a reconcile each, finding nothing to do) for seconds after. Taking turns in
 * snake order, each implementation runs every other row straight after its previous one, and
 * that row's fault then met the echoes of the last: up to 2,000 reconciles ahead of the
 * fault's own in a FIFO queue (the throttle row 2-4 s slower for whichever ran second).
 */
const QUIET_MS = 1_000;
const QUIET_BOUND_MS = 120_000;
const here = dirname(fileURLToPath(import.meta.url));
const t0 = Date.now();
const log = (line) => console.error(`[chaos ${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${line}`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The implementations' suites run side by side, each on its own control plane, but take turns:
 * one works (starts, or runs one fault and converges) while the others idle, in snake order
 * (A B, B A, A B ...). A row then compares two moments minutes apart at most, not two halves
 * of a run whose load moved between them (the rounds one after the other differed 2x).
 */
class Turns {
  #names;
  #position = 0;
  #done = new Set();
  #waiting = new Map();

  constructor(names) {
    this.#names = names;
  }

  /** Resolves when it is `name`'s turn. */
  async take(name) {
    while (this.#holder() !== name) await new Promise((resolve) => this.#waiting.set(name, resolve));
  }

  /** Ends the current turn. */
  give() {
    this.#position++;
    this.#wake();
  }

  /** `name` takes no more turns (its suite ended or failed). */
  finish(name) {
    this.#done.add(name);
    this.#wake();
  }

  #holder() {
    const n = this.#names.length;
    if (this.#done.size === n) return undefined;
    for (;;) {
      const step = Math.floor(this.#position / n);
      const order = step % 2 ? [...this.#names].reverse() : this.#names;
      const name = order[this.#position % n];
      if (!this.#done.has(name)) return name;
      this.#position++;
    }
  }

  #wake() {
    const name = this.#holder();
    const resolve = this.#waiting.get(name);
    this.#waiting.delete(name);
    resolve?.();
  }
}

async function runSuite(mode, impl, goBinary, turns) {
  await turns.take(impl);
  const settings = MODE[mode];
  const faults = allFaults.filter((f) => f.modes.includes(mode) && (!chosen || chosen.includes(f.name)));
  // What the faults need of the control plane (slow-etcd: a relay in front of etcd).
  const needs = Object.assign({}, ...faults.map((f) => f.environment ?? {}));
  const env = await TestEnvironment.start({ useExistingCluster: false, auditLog: true, ...needs });
  const processes = [];
  const relays = [];
  let stopping = false;
  let restarts = 0;
  try {
    const namespace = await env.createNamespace('chaos');
    const dir = join(os.tmpdir(), `nestor-chaos-${process.pid}-${mode}-${impl}`);
    await mkdir(dir, { recursive: true });

    /** One operator slot: its ServiceAccount (its own user in the audit log), its relay, its process. */
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
        // A new identity per process, as the default (hostname and a random suffix) gives.
        s.process = new OperatorProcess({
          kubeconfigPath,
          namespace,
          identity: `${name}-${s.generation}`,
          leaseId: 'chaos-operator',
          workers: WORKERS,
          ...settings.lease,
          env: settings.env,
          ...(impl === 'controller-runtime' ? { executable: { file: goBinary, env: { NESTOR_CHAOS: '1' } } } : {}),
        });
        processes.push(s.process);
        // As kubelet does: a process that exits (it lost the lease, it was killed) starts again.
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
    log(`${mode}/${impl}: creating ${N} ConfigMaps`);
    await parallel(names, 32, (name) =>
      env.client.request('POST', path(), { metadata: { name }, data: { v: '0', write: 'yes' } }),
    );
    const slots = [];
    for (const name of ['replica-a', 'replica-b'].slice(0, settings.replicas)) slots.push(await slot(name));
    const startedAt = Date.now();
    for (const s of slots) s.start();

    /** The slot whose user wrote the Lease last (from the audit log: holder identities differ by implementation). */
    async function leader() {
      if (slots.length === 1) return slots[0];
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
            await sleep(200);
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
        await sleep(250);
      }
    }

    /** The reconciles a process has started and not ended, read incrementally from its events. */
    const inFlight = new WeakMap();
    function busy(p, now) {
      const state = inFlight.get(p) ?? { next: 0, keys: new Set(), lastAt: 0 };
      inFlight.set(p, state);
      for (; state.next < p.events.length; state.next++) {
        const e = p.events[state.next];
        if (e.event === 'start') state.keys.add(e.key);
        else if (e.event === 'end') state.keys.delete(e.key);
        else continue;
        state.lastAt = e.at;
      }
      return state.keys.size > 0 || now - state.lastAt < QUIET_MS;
    }

    /** Waits until no live process has reconciled for QUIET_MS (at most QUIET_BOUND_MS); returns the ms that took. */
    async function idle() {
      const since = Date.now();
      for (;;) {
        const now = Date.now();
        if (!slots.some((s) => s.process?.running && busy(s.process, now))) return now - since;
        if (now - since > QUIET_BOUND_MS) {
          log(
            `${mode}/${impl}: still reconciling ${QUIET_BOUND_MS / 1000} s after converging; the next fault starts anyway`,
          );
          return now - since;
        }
        await sleep(100);
      }
    }

    const firstSyncSeconds = (await converged(0, startedAt)) / 1000;
    log(`${mode}/${impl}: every object reconciled once, ${firstSyncSeconds.toFixed(1)} s after the start`);
    await idle();
    turns.give();
    const results = [];
    let v = 0;
    for (const fault of faults) {
      const runs = [];
      for (let run = 0; run < (fault.once ? 1 : REPEAT); run++) {
        await turns.take(impl);
        v++;
        const notes = {};
        let bumped = false;
        /** The spec change, its seconds noted: the driver's writes share the machine with the operator. */
        const timedBump = async (value) => {
          const t = Date.now();
          await bump(value);
          if (value === v) notes.bumpSeconds = (Date.now() - t) / 1000;
        };
        const ctx = {
          env,
          mode,
          impl,
          namespace,
          names,
          path,
          slots,
          leader,
          v,
          bump: async (value) => {
            if (value === v) bumped = true;
            await timedBump(value);
          },
          converged,
          note: (key, value) => (notes[key] = value),
          log,
          sleep,
        };
        log(`${mode}/${impl} v=${v}: ${fault.name}${REPEAT > 1 ? ` (run ${run + 1})` : ''}`);
        try {
          const ended = await fault.inject(ctx);
          if (!bumped) await timedBump(v);
          const ms = await converged(v, ended ?? Date.now());
          await fault.after?.(ctx);
          notes.idleAfterSeconds = (await idle()) / 1000;
          // The machine's load: other work on it moves these figures more than anything.
          runs.push({ v, convergedSeconds: ms / 1000, loadAverage: os.loadavg()[0], ...notes });
          log(`${mode}/${impl} v=${v}: all ${N} converged ${(ms / 1000).toFixed(1)} s after the fault ended`);
        } catch (error) {
          // One fault that could not be delivered or did not converge is that row's result; the
          // faults after it still run (each starts from converged specs: the next bump is v + 1).
          const message = (error instanceof Error ? error.message : String(error)).split('\n')[0];
          console.error(error);
          for (const p of processes.slice(-slots.length)) console.error(`--- ${p.identity}:\n${p.tail?.() ?? ''}`);
          await fault.after?.(ctx).catch(() => {});
          runs.push({ v, failed: message, loadAverage: os.loadavg()[0], ...notes });
          log(`${mode}/${impl} v=${v}: ${fault.name} FAILED: ${message}`);
          failed = true;
          turns.give();
          break;
        }
        turns.give();
      }
      const seconds = runs.filter((r) => r.failed === undefined).map((r) => r.convergedSeconds);
      results.push({
        fault: fault.name,
        title: fault.title,
        ...(fault.figure ? { figure: fault.figure } : {}),
        median: seconds.length ? median(seconds) : null,
        worst: seconds.length ? Math.max(...seconds) : null,
        ...(runs.some((r) => r.failed) ? { failed: runs.find((r) => r.failed).failed } : {}),
        runs,
      });
    }

    // The record: no overlapping reconciles, no write while another process held the lease.
    await turns.take(impl);
    const intervals = await reconcileIntervals(processes);
    const overlapping = overlappingReconciles(intervals);
    // What the processes involved logged around the first overlap, to see why.
    if (overlapping.length) {
      const [a, b] = overlapping[0];
      const from = Math.min(a.start, b.start) - 10_000;
      const to = Math.max(a.end, b.end) + 2_000;
      for (const p of processes.filter((p) => p.identity === a.identity || p.identity === b.identity)) {
        const lines = p.output.filter((_, i) => p.outputAt[i] >= from && p.outputAt[i] <= to);
        console.error(`--- ${p.identity} around the first overlap (${a.key}):\n${lines.join('\n')}`);
      }
    }
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
    return {
      objects: N,
      workers: WORKERS,
      replicas: settings.replicas,
      lease: settings.lease,
      env: settings.env,
      firstSyncSeconds,
      results,
      reconciles: intervals.length,
      restarts,
      overlaps: overlapping.length,
      overlapSamples: overlapping.slice(0, 5),
      writes: writes.length,
      writesWithoutLease: fenced,
      machine: { cpus: os.cpus().length, node: process.version },
    };
  } catch (error) {
    for (const p of processes) console.error(`--- ${p.identity}:\n${p.tail(20)}`);
    throw error;
  } finally {
    turns.finish(impl);
    stopping = true;
    if (process.env.CHAOS_KEEP_OUTPUT) keepOutput(process.env.CHAOS_KEEP_OUTPUT, mode, impl, processes);
    await Promise.all(processes.map((p) => p.dispose()));
    await Promise.all(relays.map((r) => r.close()));
    await env.stop();
  }
}

const summaries = [];
let failed = false;
const impls = values.impls.split(',');
const goBinary = impls.includes('controller-runtime') ? await ensureGoOperator({ onProgress: log }) : undefined;
for (const mode of MODES) {
  log(`--- ${mode}: ${impls.join(' and ')}, taking turns`);
  const turns = new Turns(impls);
  const suites = await Promise.all(
    impls.map((impl) =>
      runSuite(mode, impl, goBinary, turns).then(
        (summary) => ({ mode, impl, ...summary }),
        (error) => {
          console.error(error);
          failed = true;
          return undefined;
        },
      ),
    ),
  );
  summaries.push(...suites.filter(Boolean));
}

const label = { nestor: 'Nestor', 'controller-runtime': `controller-runtime ${controllerRuntimeVersion()}` };
const cell = (r) => {
  if (!r) return '–';
  // A fault that measures its own kind shows its figure (a note, in seconds), not the ConfigMaps' convergence.
  const seconds = r.runs
    .filter((run) => run.failed === undefined)
    .map((run) => (r.figure ? run[r.figure] : run.convergedSeconds))
    .filter((s) => typeof s === 'number');
  if (!seconds.length) return r.failed ? `failed: ${r.failed}` : '–';
  const [m, worst] = [median(seconds), Math.max(...seconds)];
  if (r.failed) return `${m.toFixed(1)} s, then failed: ${r.failed}`;
  return seconds.length > 1 ? `${m.toFixed(1)} s (worst ${worst.toFixed(1)})` : `${m.toFixed(1)} s`;
};
const sections = MODES.map((mode) => {
  const ofMode = summaries.filter((s) => s.mode === mode);
  if (!ofMode.length) return '';
  const { replicas, lease } = MODE[mode];
  const how =
    mode === 'single'
      ? `1 process, the framework's lease defaults, NODE_OPTIONS=${OPERATOR_NODE_OPTIONS}`
      : `${replicas} replicas, lease ${lease.leaseDurationMs / 1000} s / ${lease.renewDeadlineMs / 1000} s / ${lease.retryPeriodMs / 1000} s`;
  const rows = [...new Map(ofMode.flatMap((s) => s.results.map((r) => [r.fault, r]))).values()];
  return [
    `### ${mode}: ${how}`,
    '',
    `| fault before the spec change | ${ofMode.map((s) => label[s.impl]).join(' | ')} |`,
    `|---|${ofMode.map(() => '---:').join('|')}|`,
    `| (first reconcile of every object, from the start) | ${ofMode.map((s) => `${s.firstSyncSeconds.toFixed(1)} s`).join(' | ')} |`,
    ...rows.map(
      (row) =>
        `| ${row.title} | ${ofMode.map((s) => cell(s.results.find((r) => r.fault === row.fault))).join(' | ')} |`,
    ),
    '',
    ...ofMode.map(
      (s) =>
        `${label[s.impl]}: ${s.reconciles} reconciles; ${s.restarts} process restarts (after a lost lease or a kill, as kubelet would); two processes reconciling one object at once: ${s.overlaps}; ${s.writes} writes, from a process while another held the lease: ${s.writesWithoutLease}; load average after each run: ${s.results.flatMap((r) => r.runs.map((run) => run.loadAverage.toFixed(1))).join(', ')} (${s.machine.cpus} CPUs).`,
    ),
    '',
  ].join('\n');
});
const table = [
  `## Chaos run ${new Date().toISOString()}: ${N} objects, ${WORKERS} workers${REPEAT > 1 ? `, each fault ${REPEAT} times: median (worst)` : ''}`,
  '',
  ...sections,
].join('\n');
console.log(table);
const out = values.out ?? join(here, 'results', `chaos-${new Date().toISOString().slice(0, 16).replace(':', '')}.json`);
await writeFile(out, JSON.stringify(summaries, null, 2));
await writeFile(out.replace(/\.json$/, '.md'), `${table}\n${await writeCharts(out, chaosCharts(summaries))}`);
log(`results: ${out}`);
if (failed || summaries.some((s) => s.overlaps || s.writesWithoutLease)) process.exitCode = 1;

/**
 * CHAOS_KEEP_OUTPUT=dir: every process's log, each line after the time it arrived, in
 * `dir/<mode>-<impl>-<identity>.log`, and its reconcile records in `.events.jsonl`, to read what a row's
 * seconds were made of.
 */
function keepOutput(dir, mode, impl, processes) {
  mkdirSync(dir, { recursive: true });
  for (const p of processes) {
    const lines = p.output.map((line, i) => `${new Date(p.outputAt[i]).toISOString()} ${line}`);
    writeFileSync(join(dir, `${mode}-${impl}-${p.identity}.log`), `${lines.join('\n')}\n`);
    const events = p.events.map((event) => JSON.stringify(event));
    writeFileSync(join(dir, `${mode}-${impl}-${p.identity}.events.jsonl`), `${events.join('\n')}\n`);
  }
}
