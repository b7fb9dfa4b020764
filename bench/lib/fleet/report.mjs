// The tables of bench/fleet.mjs.
import os from 'node:os';
import { goPeerVersion } from '../go-build.mjs';

const MB = 2 ** 20;
const s = (ms) => (ms === undefined || ms === null ? '' : `${(ms / 1000).toFixed(1)} s`);
const mb = (bytes) => (Number.isFinite(bytes) ? `${(bytes / MB).toFixed(0)} MB` : '');

export function label(impl) {
  if (impl === 'multicluster-runtime') {
    const mcr = goPeerVersion('multicluster-runtime');
    const cr = goPeerVersion('multicluster-runtime', 'sigs.k8s.io/controller-runtime');
    return `multicluster-runtime ${mcr} (controller-runtime ${cr})`;
  }
  return impl === 'nestor' ? 'Nestor' : impl;
}

export function fleetTables({ setup, engage, fairness }) {
  const { objects, membersPerServer, servers, workers } = setup;
  const layout =
    membersPerServer === 1
      ? 'one member per API server, all in namespace `bench` (a uniform controller, `clusters: members`)'
      : `up to ${membersPerServer} members per API server, each in a namespace of its own`;
  const lines = [
    `## Fleet run ${setup.startedAt}: members of ${objects} Widgets each on ${servers} member API servers and a management one`,
    '',
    `${layout}; each member its own ServiceAccount, kubeconfig Secret, connections, informer and controller ` +
      `instance in the operator; ${workers} workers in all. All of a row's Secrets are created at once. ` +
      `${setup.cpus ?? os.cpus().length} cores, load average ${setup.loadAverage.start[0].toFixed(1)} at the start ` +
      `and ${setup.loadAverage.end[0].toFixed(1)} at the end (other work shares the machine).`,
    '',
    "Engage→ is from a member's Secret created to its first Widget reconciled, and to all of them (converged).",
    '',
    '| members | operator | engage→first median | max | engage→converged median | max | first Secret → all converged | CPU | CPU / 1k reconciles |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|',
    ...engage.map((r) =>
      r.error
        ? `| ${r.members} | ${label(r.impl)} | failed: ${r.error} | | | | | | |`
        : `| ${r.members} | ${label(r.impl)} | ${s(r.firstMedianMs)} | ${s(r.firstMaxMs)} | ${s(r.medianMs)} | ${s(r.maxMs)} | ` +
          `${s(r.allMs)} | ${r.cpuSeconds.toFixed(1)} s | ${r.cpuPer1kReconciles.toFixed(2)} s |`,
    ),
    '',
    'Memory after forced GCs (Node: gc() twice; Go: runtime.GC and debug.FreeOSMemory), before any member, once all converged, and once all are disengaged:',
    '',
    '| members | operator | RSS before | after | per member | after disengaging all | heap before | after | disengaged | disengaged in |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...engage
      .filter((r) => !r.error)
      .map(
        (r) =>
          `| ${r.members} | ${label(r.impl)} | ${mb(r.before.rss)} | ${mb(r.after.rss)} | ` +
          `${((r.after.rss - r.before.rss) / r.members / MB).toFixed(1)} MB | ${mb(r.disengaged.rss)} | ` +
          `${mb(r.before.heap)} | ${mb(r.after.heap)} | ${mb(r.disengaged.heap)} | ${s(r.disengageMs)} |`,
      ),
  ];
  if (fairness.length > 0) {
    const { burst, loneObjects, thinkMs } = setup;
    lines.push(
      '',
      `### Fairness: ${burst} changes in one member while another (${loneObjects} Widgets) gets one` +
        (thinkMs ? ` (each reconcile also waits ${thinkMs} ms between its writes)` : ''),
      '',
      'The lone change is written once half the burst is; waited = from that write until its status shows it.',
      '',
      '| rep | operator | the lone change waited | burst changes written, not yet reconciled then | burst: last write | burst: all converged |',
      '|---:|---|---:|---:|---:|---:|',
      ...fairness.map((r) =>
        r.error
          ? `| ${r.rep} | ${label(r.impl)} | failed: ${r.error} | | | |`
          : `| ${r.rep} | ${label(r.impl)} | ${(r.loneWaitMs / 1000).toFixed(2)} s | ${r.backlogAtLone} | ${s(r.burstWrittenMs)} | ${s(r.burstConvergedMs)} |`,
      ),
    );
  }
  lines.push(
    '',
    '### Control planes',
    '',
    '| control plane | started in | RSS after setup | RSS at the end |',
    '|---|---:|---:|---:|',
    ...setup.controlPlanes.map((c) => `| ${c.name} | ${s(c.startMs)} | ${mb(c.rssAfterSetup)} | ${mb(c.rssAtEnd)} |`),
  );
  return lines.join('\n');
}
