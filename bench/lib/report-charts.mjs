// The charts of a report, from its results JSON: what `bench/run.mjs` and `bench/chaos.mjs`
// write beside their Markdown, and what `bench/charts.mjs` renders again for an older run.
import { writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { median } from './common.mjs';
import { barChart, lineChart } from './svg-chart.mjs';

const byImpl = (runs) => {
  const out = new Map();
  for (const run of runs) out.set(run.impl, [...(out.get(run.impl) ?? []), run]);
  return out;
};

/**
 * `bench/chaos.mjs`'s entries (one per mode and implementation): per mode, the seconds from
 * each fault's end until every object converged, a bar per implementation (the median of the
 * repeats).
 */
export function chaosCharts(entries) {
  const charts = [];
  // Runs before --mode had two replicas.
  const modeOf = (e) => e.mode ?? 'replicas';
  for (const mode of [...new Set(entries.map(modeOf))]) {
    const ofMode = entries.filter((e) => modeOf(e) === mode);
    const faults = [...new Map(ofMode.flatMap((e) => e.results.map((r) => [r.fault, r.title]))).keys()];
    const first = ofMode[0];
    const processes = first.replicas ?? (mode === 'replicas' ? 2 : 1);
    charts.push({
      name: `convergence-${mode}`,
      caption: `Seconds from the end of each fault until all ${first.objects} objects converged, ${mode} mode`,
      svg: barChart({
        title: `Convergence after each fault (${mode}: ${processes} process${processes > 1 ? 'es' : ''}, ${first.objects} objects)`,
        unit: 'seconds until every object converged (median of the repeats; shorter is better)',
        categories: faults,
        series: ofMode.map((e) => ({
          name: e.impl,
          // Runs before --repeat noted one convergedSeconds per fault.
          values: faults.map((f) => {
            const result = e.results.find((r) => r.fault === f);
            // A fault with a figure (conversion-restart) measures its own kind: its row's number.
            if (result?.figure) return median(result.runs.map((run) => run[result.figure]));
            return result?.median ?? result?.convergedSeconds ?? null;
          }),
        })),
      }),
    });
  }
  return charts;
}

/** `bench/run.mjs`'s document: memory and CPU over a burst, churn latency per rate, RSS over the churn and per synced object count. */
export function runCharts(doc) {
  const charts = [];
  const runs = doc.runs ?? {};
  for (const size of [...new Set((runs.burst ?? []).map((r) => r.size))]) {
    const first = [...byImpl((runs.burst ?? []).filter((r) => r.size === size && r.series?.length))].map(
      ([impl, rs]) => ({ impl, series: rs[0].series }),
    );
    if (first.length === 0) continue;
    charts.push({
      name: `burst-${size}-rss`,
      caption: `Operator RSS during a burst of ${size} new objects (first repetition)`,
      svg: lineChart({
        title: `RSS while reconciling a burst of ${size.toLocaleString('en-US')} new objects`,
        xLabel: 'seconds since the first create',
        yLabel: 'RSS (MB)',
        series: first.map(({ impl, series }) => ({ name: impl, points: series.map(([t, rss]) => [t, rss]) })),
      }),
    });
    charts.push({
      name: `burst-${size}-cpu`,
      caption: `Operator CPU used during a burst of ${size} new objects (first repetition)`,
      svg: lineChart({
        title: `CPU used while reconciling a burst of ${size.toLocaleString('en-US')} new objects`,
        xLabel: 'seconds since the first create',
        yLabel: 'CPU seconds used (cumulative)',
        series: first.map(({ impl, series }) => ({ name: impl, points: series.map(([t, , cpu]) => [t, cpu]) })),
      }),
    });
  }
  const churn = runs.churn ?? [];
  const rates = [...new Set(churn.map((r) => r.rate))].sort((a, b) => a - b);
  if (rates.length > 1) {
    for (const [key, label] of [
      ['p50Ms', 'p50'],
      ['p99Ms', 'p99'],
    ]) {
      charts.push({
        name: `churn-${label}`,
        caption: `Churn: ${label} latency from a write to its reconcile, per offered rate`,
        svg: lineChart({
          title: `Churn: ${label} latency from a spec write to its reconcile`,
          xLabel: 'offered rate (changes per second)',
          yLabel: `${label} latency (ms)`,
          series: [...byImpl(churn)].map(([impl, rs]) => ({
            name: impl,
            points: rates.map((rate) => [rate, median(rs.filter((r) => r.rate === rate).map((r) => r[key]))]),
          })),
        }),
      });
    }
  }
  const soaked = [...byImpl(churn.filter((r) => r.rssSeriesMB?.length > 1))];
  if (soaked.length > 0) {
    charts.push({
      name: 'churn-rss',
      caption: 'RSS over the churn, sampled every 10 s (first run per implementation)',
      svg: lineChart({
        title: `RSS under churn (${soaked[0][1][0].rate}/s)`,
        xLabel: 'seconds of churn',
        yLabel: 'RSS (MB)',
        series: soaked.map(([impl, rs]) => ({ name: impl, points: rs[0].rssSeriesMB.map((mb, i) => [i * 10, mb]) })),
      }),
    });
  }
  // One chart per kind cached (results from before --sync-kinds hold ConfigMaps only).
  const allSync = runs.sync ?? [];
  for (const kind of new Set(allSync.map((r) => r.kind ?? 'configmap'))) {
    const sync = allSync.filter((r) => (r.kind ?? 'configmap') === kind);
    const sizes = [...new Set(sync.map((r) => r.size))].sort((a, b) => a - b);
    if (sizes.length < 2) continue;
    const what = kind === 'configmap' ? 'ConfigMaps' : kind === 'widget' ? 'Widgets' : kind;
    charts.push({
      name: kind === 'configmap' ? 'sync-rss' : `sync-rss-${kind}`,
      caption: `Operator RSS once every object is cached, per object count (${what})`,
      svg: lineChart({
        title: `RSS with every object cached (${what})`,
        xLabel: `${what} cached`,
        yLabel: 'RSS (MB)',
        series: [...byImpl(sync)]
          .filter(([impl]) => impl !== 'apiserver')
          .map(([impl, rs]) => ({
            name: impl,
            points: sizes.map((size) => [size, median(rs.filter((r) => r.size === size).map((r) => r.rssAfterMB))]),
          })),
      }),
    });
  }
  return charts;
}

/**
 * Writes each chart as `<results base>-<name>.svg` beside the results and returns the Markdown
 * that shows them (relative links, so the report renders where it lies).
 */
export async function writeCharts(resultsPath, charts) {
  const base = resultsPath.replace(/\.json$/, '');
  const lines = [];
  for (const chart of charts) {
    const file = `${base}-${chart.name}.svg`;
    await writeFile(file, chart.svg);
    lines.push(`![${chart.caption}](${basename(file)})`);
  }
  return lines.length ? `\n${lines.join('\n\n')}\n` : '';
}
