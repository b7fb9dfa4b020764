// etcd slow: every byte between kube-apiserver and etcd arrives LATENCY_MS late, each way,
// for SLOW_MS, while a part of the specs change (through the slow API server: each write
// takes seconds); then etcd is fast again and the suite changes the rest. Convergence is
// measured from the end of the slowness. The operator must go on working, slowly, and not
// take the slow server for a dead one (Nestor's outage gate holding dispatch shows as
// "holding reconciles" in its output, counted here).
// Needs from ctx: env (its etcdRelay: a TcpRelay with slow(ms), which `environment` asks
// for), names, path, v, slots, note, log, sleep.
import { parallel } from '@nestor/testing';

export const name = 'slow-etcd';
export const title =
  'etcd slow (every byte between kube-apiserver and etcd 1 s late each way) for 20 s while 256 specs change, then fast again';
export const modes = ['single', 'replicas'];
export const order = 80;
/** TestEnvironment.start options this fault needs: etcd behind a relay it can slow. */
export const environment = { etcdRelay: true };

const LATENCY_MS = 1_000;
const SLOW_MS = 20_000;
const CHANGED_WHILE_SLOW = 256;

let since;

export async function inject({ env, names, path, v, note, log, sleep }) {
  since = Date.now();
  env.etcdRelay.slow(LATENCY_MS);
  const slowAt = Date.now();
  const changed = names.slice(0, CHANGED_WHILE_SLOW);
  let timedOut = 0;
  try {
    await parallel(changed, 64, async (name) => {
      for (let attempt = 0; ; attempt++) {
        try {
          return await env.client.request(
            'PATCH',
            path(name),
            { data: { v: String(v) } },
            'application/merge-patch+json',
          );
        } catch (error) {
          // The API server's own timeout (504) when etcd is slower than it: sent again.
          if (attempt > 20) throw error;
          timedOut++;
          await sleep(500);
        }
      }
    });
    const written = Date.now();
    await sleep(Math.max(0, slowAt + SLOW_MS - Date.now()));
    const list = await env.client.request('GET', path());
    const done = new Set(changed);
    const early = list.items.filter(
      (cm) => done.has(cm.metadata.name) && cm.metadata.annotations?.['nestor.test/observed'] === String(v),
    ).length;
    note('specWritesWhileSlowSeconds', (written - slowAt) / 1000);
    note('convergedWhileSlow', `${early} of ${changed.length}`);
    note('harnessWritesRetried', timedOut);
    log(
      `slow-etcd: ${changed.length} specs changed in ${((written - slowAt) / 1000).toFixed(1)} s; ${early} converged before etcd was fast again`,
    );
  } finally {
    env.etcdRelay.slow(0);
  }
  return Date.now();
}

/**
 * Whether Nestor's outage gate held dispatch during the round (it must not: the server
 * answered), and how many of the operator's writes failed (both implementations print them).
 */
export async function after({ slots, note }) {
  let held = 0;
  const failed = new Map();
  for (const slot of slots) {
    for (const e of slot.process?.events ?? []) {
      if (e.event !== 'write' || e.ok !== false || e.at < since) continue;
      const reason = /lease/.test(e.error ?? '') ? 'refused by the lease fence' : (e.error ?? '').slice(0, 80);
      failed.set(reason, (failed.get(reason) ?? 0) + 1);
    }
    const output = slot.process?.output ?? [];
    const at = slot.process?.outputAt;
    output.forEach((line, i) => {
      if (line.includes('holding reconciles') && (!at || at[i] >= since)) held++;
    });
  }
  note('outageGateHolds', held);
  note('failedWrites', Object.fromEntries(failed));
}
