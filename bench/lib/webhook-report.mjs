// Summaries and Markdown tables of the webhook benchmark (bench/lib/webhook-scenarios.mjs).
import { IMPL_LABELS, cell, fmt, markdownTable, ratio, summarize } from './report.mjs';

const LABELS = { ...IMPL_LABELS, none: 'no webhook' };
const ORDER = [
  'none',
  'nestor',
  'nestor-http2',
  'nestor-nest',
  'nestor-nest-http2',
  'nest-express',
  'controller-runtime',
  'controller-runtime-http2',
];
const NESTORS = ['nestor', 'nestor-nest', 'nestor-http2', 'nestor-nest-http2', 'nest-express'];

function group(runs, keyOf, metrics) {
  const groups = new Map();
  for (const run of runs) {
    const key = keyOf(run);
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(run);
  }
  return [...groups.values()].map((rs) => ({
    rate: rs[0].rate,
    objects: rs[0].objects,
    impl: rs[0].impl,
    stats: { runs: rs.length, ...summarize(rs, metrics) },
  }));
}

export function summarizeWebhooks(runs) {
  const out = {};
  if (runs.admission?.length) {
    out.admission = group(runs.admission, (r) => `${r.rate}/${r.impl}`, [
      'achievedRate',
      'p50Ms',
      'p90Ms',
      'p99Ms',
      'p999Ms',
      'maxMs',
      'cpuCores',
      'cpuUsPerReview',
      'generatorCpuCores',
      'rssIdleMB',
      'rssMB',
      'maxRssMB',
      'held',
    ]);
  }
  if (runs.e2e?.length) {
    out.e2e = group(runs.e2e, (r) => `${r.rate}/${r.impl}`, [
      'achievedRate',
      'p50Ms',
      'p90Ms',
      'p99Ms',
      'controlPlaneCpuCores',
      'cpuCores',
      'cpuUsPerReview',
      'rssMB',
      'connectionsPer100',
      'held',
    ]);
  }
  if (runs.conversion?.length) {
    out.conversion = group(runs.conversion, (r) => `${r.objects}/${r.impl}`, [
      'wallMs',
      'webhookCpuMs',
      'controlPlaneCpuMs',
      'reviews',
      'rssMB',
      'maxRssMB',
    ]);
  }
  if (runs.conversionDirect?.length) {
    out.conversionDirect = group(runs.conversionDirect, (r) => `${r.objects}/${r.impl}`, [
      'bodyMB',
      'wallMs',
      'webhookCpuMs',
      'maxRssMB',
    ]);
  }
  return out;
}

const ordered = (entries) => ORDER.map((impl) => entries.find((e) => e.impl === impl)).filter(Boolean);
const rateLabel = (rate) => (rate === 'max' ? 'max' : `${fmt(rate)}/s`);
const held = (s) => (s.held ? `${Math.round(s.held.mean * s.held.n)}/${s.held.n}` : '–');

export function renderWebhookTables(doc) {
  const summary = doc.summary;
  const parts = [];
  if (summary.admission?.length) {
    const rows = [];
    const ratios = [];
    for (const rate of [...new Set(summary.admission.map((g) => g.rate))]) {
      const entries = ordered(summary.admission.filter((g) => g.rate === rate));
      for (const e of entries) {
        const s = e.stats;
        rows.push([
          rateLabel(rate),
          LABELS[e.impl],
          `${s.runs}`,
          rate === 'max' ? '–' : held(s),
          cell(s.achievedRate),
          cell(s.p50Ms, 2),
          cell(s.p99Ms, 2),
          cell(s.p999Ms, 2),
          cell(s.cpuCores, 2),
          cell(s.cpuUsPerReview),
          cell(s.rssMB),
        ]);
      }
      const go = entries.find((e) => e.impl === 'controller-runtime');
      for (const n of entries.filter((e) => NESTORS.includes(e.impl))) {
        if (!go) continue;
        ratios.push([
          rateLabel(rate),
          `${LABELS[n.impl]} / ${LABELS[go.impl]}`,
          ratio(n.stats.achievedRate, go.stats.achievedRate),
          ratio(n.stats.p50Ms, go.stats.p50Ms),
          ratio(n.stats.p99Ms, go.stats.p99Ms),
          ratio(n.stats.cpuUsPerReview, go.stats.cpuUsPerReview),
          ratio(n.stats.rssMB, go.stats.rssMB),
        ]);
      }
    }
    const c = doc.config;
    parts.push(
      `### Admission reviews straight to each server: UPDATE of a ~1 KiB Widget with its oldObject, HTTPS keep-alive; ` +
        `open loop for ${c.webhookSeconds} s (latency from the scheduled time), "max" = ${c.webhookConcurrency} in flight (closed loop)\n\n` +
        markdownTable(
          [
            'rate',
            'server',
            'runs',
            'held',
            'reviews/s',
            'p50 ms',
            'p99 ms',
            'p99.9 ms',
            'CPU cores',
            'CPU µs / review',
            'RSS MB',
          ],
          rows,
        ) +
        (ratios.length
          ? '\n\n' + markdownTable(['rate', 'ratio', 'reviews/s', 'p50', 'p99', 'CPU / review', 'RSS'], ratios)
          : ''),
    );
  }
  if (summary.e2e?.length) {
    const rows = [];
    for (const rate of [...new Set(summary.e2e.map((g) => g.rate))]) {
      for (const e of ordered(summary.e2e.filter((g) => g.rate === rate))) {
        const s = e.stats;
        rows.push([
          rateLabel(rate),
          LABELS[e.impl],
          `${s.runs}`,
          held(s),
          cell(s.achievedRate),
          cell(s.p50Ms, 2),
          cell(s.p99Ms, 2),
          cell(s.controlPlaneCpuCores, 2),
          e.impl === 'none' ? '–' : cell(s.cpuCores, 2),
          e.impl === 'none' ? '–' : cell(s.cpuUsPerReview),
          e.impl === 'none' ? '–' : cell(s.connectionsPer100, 1),
        ]);
      }
    }
    parts.push(
      `### Through the API server: dry-run creates of Widgets at a fixed rate for ${doc.config.webhookSeconds} s, the validating webhook installed (URL + caBundle)\n\n` +
        markdownTable(
          [
            'rate',
            'webhook',
            'runs',
            'held',
            'creates/s',
            'p50 ms',
            'p99 ms',
            'API server+etcd cores',
            'webhook cores',
            'webhook CPU µs / review',
            'new TLS connections / 100 reviews',
          ],
          rows,
        ),
    );
  }
  if (summary.conversion?.length) {
    const rows = ordered(summary.conversion).map((e) => {
      const s = e.stats;
      return [
        LABELS[e.impl] + (e.impl === 'none' ? ' (LIST at the stored version)' : ''),
        `${s.runs}`,
        fmt(e.objects),
        cell(s.wallMs),
        e.impl === 'none' ? '–' : cell(s.webhookCpuMs),
        e.impl === 'none' ? '–' : cell(s.reviews),
        cell(s.controlPlaneCpuMs),
        e.impl === 'none' ? '–' : cell(s.rssMB),
      ];
    });
    parts.push(
      '### Conversion: a LIST of Widgets stored as v1, read as v2 through the API server, each peer the conversion webhook\n\n' +
        markdownTable(
          [
            'webhook',
            'runs',
            'objects',
            'LIST ms',
            'webhook CPU ms',
            'ConversionReviews',
            'API server+etcd CPU ms',
            'webhook RSS MB',
          ],
          rows,
        ),
    );
  }
  if (summary.conversionDirect?.length) {
    const rows = ordered(summary.conversionDirect).map((e) => {
      const s = e.stats;
      return [
        LABELS[e.impl],
        `${s.runs}`,
        fmt(e.objects),
        cell(s.bodyMB, 1),
        cell(s.wallMs),
        cell(s.webhookCpuMs),
        cell(s.maxRssMB),
      ];
    });
    parts.push(
      '### Conversion without the API server: one ConversionReview of every stored Widget (v1 -> v2) posted to each peer\n\n' +
        markdownTable(
          ['webhook', 'runs', 'objects', 'body MB', 'answered in ms', 'webhook CPU ms', 'peak RSS MB'],
          rows,
        ),
    );
  }
  return parts.join('\n\n');
}
