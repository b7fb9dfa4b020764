import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chaosCharts } from './report-charts.mjs';
import { barChart, lineChart, ticks } from './svg-chart.mjs';

describe('svg charts of the reports', () => {
  it('ticks() covers the maximum in round steps from zero', () => {
    assert.deepEqual(ticks(38.2), [0, 10, 20, 30, 40]);
    assert.deepEqual(ticks(4), [0, 1, 2, 3, 4]);
    assert.deepEqual(ticks(0.37), [0, 0.1, 0.2, 0.3, 0.4]);
    assert.deepEqual(ticks(100_000), [0, 20_000, 40_000, 60_000, 80_000, 100_000]);
    assert.deepEqual(ticks(0), [0, 1], 'an empty chart still has an axis');
  });

  it('a bar per implementation and fault, a missing figure said, names escaped', () => {
    const svg = barChart({
      title: 'a <b> & c',
      unit: 's',
      categories: ['restart', 'conversion'],
      series: [
        { name: 'nestor', values: [14.7, 30.1] },
        { name: 'controller-runtime', values: [54.8, null] },
      ],
    });
    assert.equal(svg.match(/<rect class="bar"/g)?.length, 3, 'three bars drawn');
    assert.match(svg, /not measured/);
    assert.match(svg, /a &lt;b&gt; &amp; c/);
    assert.doesNotMatch(svg, /NaN|undefined/);
  });

  it('a line per series, skipping points that were not measured', () => {
    const svg = lineChart({
      title: 't',
      xLabel: 'x',
      yLabel: 'y',
      series: [
        {
          name: 'nestor',
          points: [
            [0, 90],
            [1, 110],
            [2, NaN],
          ],
        },
        {
          name: 'controller-runtime',
          points: [
            [0, 30],
            [1, 35],
            [2, 40],
          ],
        },
        { name: 'apiserver', points: [[0, NaN]] },
      ],
    });
    assert.equal(svg.match(/<polyline/g)?.length, 2, 'a series with no point is left out');
    assert.doesNotMatch(svg, /NaN|undefined/);
  });

  it('the chaos chart: one per mode, the median of the repeats per fault', () => {
    const entry = (mode, impl, medians) => ({
      mode,
      impl,
      objects: 2000,
      replicas: mode === 'single' ? 1 : 2,
      results: Object.entries(medians).map(([fault, median]) => ({ fault, title: fault, median })),
    });
    const charts = chaosCharts([
      entry('single', 'nestor', { 'apiserver-restart': 12.5 }),
      entry('single', 'controller-runtime', { 'apiserver-restart': 17.25 }),
      entry('replicas', 'nestor', { 'leader-silenced': 19.6 }),
    ]);
    assert.deepEqual(
      charts.map((c) => c.name),
      ['convergence-single', 'convergence-replicas'],
    );
    assert.match(charts[0].svg, />12\.5</);
    assert.match(charts[0].svg, />17\.3</);
    assert.match(charts[1].svg, /2 processes/);
  });
});
