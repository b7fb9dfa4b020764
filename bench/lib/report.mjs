// Summaries (mean ± stddev over repetitions), ratios and the Markdown tables run.mjs prints
// and writes next to the JSON.
import { mean, stddev } from './common.mjs';

export const IMPL_LABELS = {
  nestor: 'Nestor',
  'nestor-json': 'Nestor, JSON',
  'nestor-nest': 'Nestor in a Nest app',
  'nestor-before': 'Nestor, before',
  'nestor-nest-before': 'Nestor in a Nest app, before',
  'client-node': 'client-node informer',
  'controller-runtime': 'controller-runtime (Go)',
  'controller-runtime-json': 'controller-runtime (Go), JSON',
  'kube-rs': 'kube-rs (Rust)',
  apiserver: 'API server alone',
  'nestor-http2': 'Nestor, HTTP/2 offered',
  'controller-runtime-http2': 'controller-runtime (Go), HTTP/2 offered',
  'nestor-nest-http2': 'Nestor in a Nest app, HTTP/2 offered',
  'nest-express': "Nest's HTTP stack (platform-express)",
};

/** What each --sync-kinds kind is, in the sync table's title. */
const SYNC_TITLES = {
  configmap: 'ConfigMaps (~1 KiB each)',
  widget: 'Widgets (a custom resource, ~1 KiB each)',
};

/** The implementations whose ratios to the baselines are reported. */
const NESTORS = ['nestor', 'nestor-nest'];

/** { metric: { mean, sd, n, values } } over the runs' metric values (NaN/undefined skipped). */
export function summarize(runs, metrics) {
  const out = {};
  for (const metric of metrics) {
    const values = runs.map((r) => r[metric]).filter((v) => typeof v === 'number' && Number.isFinite(v));
    out[metric] = { mean: mean(values), sd: stddev(values), n: values.length, values };
  }
  return out;
}

export function fmt(value, digits = 0) {
  if (value === undefined || value === null || !Number.isFinite(value)) return '–';
  const abs = Math.abs(value);
  if (digits === 0 && abs < 10 && abs !== 0) digits = abs < 1 ? 2 : 1;
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** "12.3 ± 0.4" (or "12.3" for one run). */
export function cell(stat, digits = 0) {
  if (!stat || stat.n === 0) return '–';
  if (stat.n === 1) return fmt(stat.mean, digits);
  return `${fmt(stat.mean, digits)} ± ${fmt(stat.sd, digits)}`;
}

export function ratio(a, b, digits = 2) {
  if (!a || !b || !Number.isFinite(a.mean) || !Number.isFinite(b.mean) || b.mean === 0) return '–';
  return `${(a.mean / b.mean).toFixed(digits)}×`;
}

export function markdownTable(header, rows) {
  const lines = [`| ${header.join(' | ')} |`, `|${header.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`];
  for (const row of rows) lines.push(`| ${row.join(' | ')} |`);
  return lines.join('\n');
}

/**
 * The tables of one result document: per scenario, one row per (size, implementation),
 * then the ratios of Nestor to each baseline.
 */
export function renderTables(doc) {
  const parts = [];
  const groups = doc.summary;
  const implOrder = [
    'nestor',
    'nestor-json',
    'nestor-nest',
    'nestor-before',
    'nestor-nest-before',
    'client-node',
    'controller-runtime',
    'controller-runtime-json',
    'kube-rs',
    'apiserver',
  ];
  const byImpl = (entries) => implOrder.map((impl) => entries.find((e) => e.impl === impl)).filter(Boolean);
  /** Each Nestor variant against each baseline: [label, Nestor's stats, the baseline's stats]. */
  const versus = (entries) =>
    entries
      .filter((n) => NESTORS.includes(n.impl))
      .flatMap((n) =>
        entries
          .filter((e) => !NESTORS.includes(e.impl))
          .map((e) => [`${IMPL_LABELS[n.impl]} / ${IMPL_LABELS[e.impl]}`, n.stats, e.stats, e.impl]),
      );

  if (groups.sync?.length) {
    // Results from before --sync-kinds hold ConfigMaps only.
    const kindOf = (g) => g.kind ?? 'configmap';
    for (const kind of unique(groups.sync.map(kindOf))) {
      const rows = [];
      const ratios = [];
      const ofKind = groups.sync.filter((g) => kindOf(g) === kind);
      for (const size of unique(ofKind.map((g) => g.size))) {
        const entries = byImpl(ofKind.filter((g) => g.size === size));
        for (const e of entries) {
          const s = e.stats;
          rows.push([
            `${fmt(size)}`,
            IMPL_LABELS[e.impl],
            `${s.runs}`,
            cell(s.syncMs),
            cell(s.cpuMs),
            cell(s.controlPlaneCpuMs),
            e.impl === 'apiserver' ? 'n/a' : cell(s.heapPerObject),
            e.impl === 'apiserver' ? 'n/a' : cell(s.rssPerObject),
            cell(s.rssBeforeMB, 1),
            cell(s.heapAfterMB, 1),
            cell(s.rssAfterMB, 1),
          ]);
        }
        for (const [label, nestor, other, impl] of versus(entries)) {
          ratios.push([
            fmt(size),
            label,
            ratio(nestor.syncMs, other.syncMs),
            ratio(nestor.cpuMs, other.cpuMs),
            ratio(nestor.controlPlaneCpuMs, other.controlPlaneCpuMs),
            impl === 'apiserver' ? '–' : ratio(nestor.heapPerObject, other.heapPerObject),
            ratio(nestor.rssAfterMB, other.rssAfterMB),
          ]);
        }
      }
      parts.push(
        `### Initial sync: N existing ${SYNC_TITLES[kind] ?? kind} listed and cached\n\n` +
          markdownTable(
            [
              'objects',
              'implementation',
              'runs',
              'sync ms',
              'CPU ms',
              'apiserver+etcd CPU ms',
              'heap B/object',
              'RSS B/object',
              'RSS before (nothing cached) MB',
              'heap after MB',
              'RSS after MB',
            ],
            rows,
          ) +
          '\n\n' +
          markdownTable(
            ['objects', 'ratio', 'sync time', 'CPU', 'apiserver+etcd CPU', 'heap/object', 'RSS after'],
            ratios,
          ),
      );
    }
  }

  if (groups.burst?.length) {
    const rows = [];
    const ratios = [];
    for (const size of unique(groups.burst.map((g) => g.size))) {
      const entries = byImpl(groups.burst.filter((g) => g.size === size));
      for (const e of entries) {
        const s = e.stats;
        rows.push([
          fmt(size),
          IMPL_LABELS[e.impl],
          `${s.runs}`,
          cell(s.wallMs),
          cell(s.startupMs),
          cell(s.reconcilesPerSecond),
          cell(s.cpuSeconds, 2),
          cell(s.cpuSecondsPer1k, 2),
          cell(s.controlPlaneCpuPer1k, 2),
          cell(s.maxRssMB),
        ]);
      }
      for (const [label, nestor, other] of versus(entries)) {
        ratios.push([
          fmt(size),
          label,
          ratio(nestor.wallMs, other.wallMs),
          ratio(nestor.cpuSecondsPer1k, other.cpuSecondsPer1k),
          ratio(nestor.maxRssMB, other.maxRssMB),
        ]);
      }
    }
    parts.push(
      '### Burst: N Widgets created at once; each reconcile = 1 server-side apply of a child ConfigMap + 1 status merge patch\n\n' +
        markdownTable(
          [
            'objects',
            'implementation',
            'runs',
            'time to all reconciled ms',
            'start-up ms',
            'reconciles/s',
            'CPU s',
            'CPU s / 1k reconciles',
            'apiserver+etcd CPU s / 1k',
            'peak RSS MB',
          ],
          rows,
        ) +
        '\n\n' +
        markdownTable(['objects', 'ratio', 'time to all reconciled', 'CPU / reconcile', 'peak RSS'], ratios),
    );
  }

  if (groups.owned?.length) {
    const rows = [];
    const ratios = [];
    for (const size of unique(groups.owned.map((g) => g.size))) {
      const entries = byImpl(groups.owned.filter((g) => g.size === size));
      for (const e of entries) {
        const s = e.stats;
        rows.push([
          fmt(size),
          IMPL_LABELS[e.impl],
          `${s.runs}`,
          cell(s.rssMB, 1),
          cell(s.anonMB, 1),
          cell(s.fileMB, 1),
          cell(s.maxRssMB, 1),
          cell(s.cpuSeconds, 2),
          cell(s.heapAfterGcMB, 1),
        ]);
      }
      for (const [label, nestor, other] of versus(entries)) {
        ratios.push([
          fmt(size),
          label,
          ratio(nestor.rssMB, other.rssMB),
          ratio(nestor.anonMB, other.anonMB),
          ratio(nestor.maxRssMB, other.maxRssMB),
        ]);
      }
    }
    parts.push(
      `### Owned: N ConfigMaps owned by ${doc.config.ownedOwners ?? 100} Widgets, never read by the reconcile; RSS ${(doc.config.ownedIdleMs ?? 20_000) / 1000} s after ready\n\n` +
        markdownTable(
          [
            'owned ConfigMaps',
            'implementation',
            'runs',
            'RSS MB',
            'of which anonymous MB',
            'file-backed MB',
            'peak RSS MB',
            'CPU s since spawn',
            'heap after GC MB',
          ],
          rows,
        ) +
        '\n\n' +
        markdownTable(['owned ConfigMaps', 'ratio', 'RSS', 'anonymous', 'peak RSS'], ratios),
    );
  }

  if (groups.churn?.length) {
    const rows = [];
    const ratios = [];
    for (const rate of unique(groups.churn.map((g) => g.rate))) {
      const entries = byImpl(groups.churn.filter((g) => g.rate === rate));
      for (const e of entries) {
        const s = e.stats;
        rows.push([
          `${fmt(rate)}/s`,
          IMPL_LABELS[e.impl],
          `${s.runs}`,
          s.held ? `${Math.round(s.held.mean * s.held.n)}/${s.held.n}` : '–',
          cell(s.achievedRate),
          cell(s.p50Ms, 1),
          cell(s.p95Ms, 1),
          cell(s.p99Ms, 1),
          cell(s.cpuSecondsPer1k, 2),
          cell(s.controlPlaneCpuPer1k, 2),
          cell(s.maxRssMB),
          cell(s.rssEndMB),
        ]);
      }
      for (const [label, nestor, other] of versus(entries)) {
        ratios.push([
          `${fmt(rate)}/s`,
          label,
          ratio(nestor.p50Ms, other.p50Ms),
          ratio(nestor.p99Ms, other.p99Ms),
          ratio(nestor.cpuSecondsPer1k, other.cpuSecondsPer1k),
          ratio(nestor.maxRssMB, other.maxRssMB),
        ]);
      }
    }
    parts.push(
      `### Steady churn: spec updates at a fixed rate over ${doc.config.churnObjects} Widgets for ${doc.config.churnSeconds} s; latency = generator's write to reconcile start\n\n` +
        markdownTable(
          [
            'offered rate',
            'implementation',
            'runs',
            'held',
            'achieved writes/s',
            'p50 ms',
            'p95 ms',
            'p99 ms',
            'CPU s / 1k events',
            'apiserver+etcd CPU s / 1k',
            'peak RSS MB',
            'RSS at end MB',
          ],
          rows,
        ) +
        '\n\n' +
        markdownTable(['rate', 'ratio', 'p50', 'p99', 'CPU / event', 'peak RSS'], ratios),
    );
  }
  return parts.join('\n\n');
}

function unique(values) {
  return [...new Set(values)];
}
