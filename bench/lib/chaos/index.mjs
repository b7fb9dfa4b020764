// The chaos suite's faults (bench/chaos.mjs), one file each in this directory. A fault file
// exports:
//   name      string, short and unique: the --faults option and the results use it
//   title     string: the row's text in the report ("what happened before the spec change")
//   modes     array of 'single' and/or 'replicas': the ways of running the suite it applies to
//   inject    async (ctx) => number: injects the fault and returns when it ended (Date.now()
//             then); convergence on ctx.v is measured from that moment. If it does not change
//             the specs itself (ctx.bump(ctx.v)), the suite does, right after it returns.
//   order     optional number (default 100): position in the run, lowest first; ties by name
//   once      optional boolean: not repeated by --repeat (the suite's state changes for good)
//   after     optional async (ctx) => void: undoes the fault once the round converged (heal)
//   figure    optional string: a note (seconds) the report's row shows, median and worst over
//             the runs, in place of the convergence on ctx.v (a fault that measures its own kind)
//   environment optional object: TestEnvironment.start options the fault needs (merged over
//             the suite's own for a run that includes it; slow-etcd: { etcdRelay: true })
// Files whose name starts with '_', or that export no inject, are helpers, not faults.
//
// The ctx each inject and after gets:
//   env         the TestEnvironment (@nestor/testing): client, server, kubeconfigPath,
//               restartApiServer({ kill, downtimeMs }), compactEtcd(), auditEvents()
//   mode        'single' (one process, its defaults, NODE_OPTIONS as the generated Deployment)
//               or 'replicas' (two, short lease timings)
//   impl        'nestor' or 'controller-runtime'
//   namespace   the namespace the ConfigMaps and the Lease are in
//   names       the ConfigMaps' names (N of them: cm-0, cm-1, ...)
//   path(name?) the ConfigMaps' API path, or one ConfigMap's
//   slots       the operator slots, one per replica: { name, user (its ServiceAccount's user
//               name in the audit log), relay (its TcpRelay to the API server: silence(),
//               partition(), heal(), accepted), kubeconfigPath, process (the running
//               OperatorProcess: signal(), exited, events, output, outputAt, spawnedAt),
//               generation, start() }. A process that exits is started again a second later,
//               as kubelet would; slot.process is then the new one.
//   leader()    async: the slot whose user wrote the Lease last (the single slot in 'single')
//   v           the value the round converges on (data.v); the previous round converged on v - 1
//   bump(v)     async: changes every ConfigMap's data.v to v, retrying while the API server is away
//   converged(v, since)  async: ms from `since` until every ConfigMap's reconcile wrote v
//   note(key, value)     adds a figure to this round's result (timelines, counts)
//   log(line)   a progress line on stderr
//   sleep(ms)   async
import { readdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** Every fault in this directory, in run order. */
export async function loadFaults() {
  const files = (await readdir(here)).filter((f) => f.endsWith('.mjs') && f !== 'index.mjs' && !f.startsWith('_'));
  const faults = [];
  for (const file of files) {
    const fault = await import(pathToFileURL(`${here}/${file}`).href);
    if (fault.inject === undefined) continue; // a helper the faults share (half-open.mjs, relay-worker.mjs)
    for (const field of ['name', 'title', 'modes']) {
      if (fault[field] === undefined) throw new Error(`bench/lib/chaos/${file} exports no ${field}`);
    }
    faults.push(fault);
  }
  const names = new Set();
  for (const fault of faults) {
    if (names.has(fault.name)) throw new Error(`two chaos faults are named ${fault.name}`);
    names.add(fault.name);
  }
  return faults.sort((a, b) => (a.order ?? 100) - (b.order ?? 100) || a.name.localeCompare(b.name));
}
