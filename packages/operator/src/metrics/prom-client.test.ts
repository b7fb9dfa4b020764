// The default metrics made from prom-client's files (prom-client.ts) are its own: the same
// names, help, types and labels as its collectDefaultMetrics, so that a release of
// prom-client that adds or changes one fails here rather than going missing from /metrics.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { collectDefaultMetrics as nestorDefaults, prom } from './prom-client.js';

/** Each metric's header lines and its sample names with their label names, values left out. */
async function shapes(registry: Registry): Promise<string[]> {
  const text = await registry.metrics();
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) =>
      line.startsWith('#')
        ? line
        : line
            .replace(/\{([^}]*)\}/, (_, labels: string) => `{${labels.replace(/="[^"]*"/g, '')}}`)
            .replace(/ \S+$/, ''),
    );
}

describe('default metrics from prom-client’s files', () => {
  it('are prom-client’s collectDefaultMetrics, metric for metric', async () => {
    const theirs = new Registry();
    collectDefaultMetrics({ register: theirs });
    const ours = new prom.Registry();
    nestorDefaults(ours);
    assert.deepEqual(await shapes(ours), await shapes(theirs));
  });

  it('count CPU time as prom-client does: user and system, and their sum', async () => {
    const registry = new prom.Registry();
    nestorDefaults(registry);
    const start = Date.now();
    while (Date.now() - start < 30); // some CPU to count
    const values = Object.fromEntries(
      (await registry.getMetricsAsJSON())
        .filter((metric) => metric.name.startsWith('process_cpu_'))
        .map((metric) => [metric.name, metric.values[0]?.value ?? 0]),
    );
    assert.ok(values['process_cpu_user_seconds_total']! > 0);
    assert.equal(
      values['process_cpu_seconds_total'],
      values['process_cpu_user_seconds_total']! + values['process_cpu_system_seconds_total']!,
    );
  });
});
