import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { Connectivity, KubeApiError, silentLogger } from '@nestor/core';
import { OUTAGE_FAST_PROBE_MS, OUTAGE_FAST_PROBE_WINDOW_MS, OutageGate } from './outage-gate.js';

const refused = () =>
  KubeApiError.fromNetwork(
    { method: 'GET', path: '/api/v1/configmaps' },
    'https://k',
    Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
  );

/** A gate over a server whose /readyz answers `status` (0: no answer); probes are counted. */
function gate(options: { probeIntervalMs?: number } = {}) {
  const connectivity = new Connectivity();
  const server = { status: 0, probes: 0 };
  const pool = { paused: false, pause: () => (pool.paused = true), resume: () => (pool.paused = false) };
  const outage = new OutageGate({
    transport: {
      connectivity,
      request: async () => {
        server.probes++;
        if (server.status === 0) throw refused();
        return { status: server.status } as never;
      },
    },
    pool,
    logger: silentLogger,
    ...options,
  });
  return { connectivity, server, pool, outage };
}

/** Lets the probe's promise settle. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('OutageGate', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'] }));
  afterEach(() => mock.timers.reset());

  it(`probes every ${OUTAGE_FAST_PROBE_MS} ms early in an outage, then every second, and resumes on 200`, async () => {
    const { connectivity, server, pool, outage } = gate();
    outage.start();
    connectivity.failed(refused());
    await settle();
    assert.equal(pool.paused, true);
    assert.equal(server.probes, 1, 'a probe at once');

    mock.timers.tick(OUTAGE_FAST_PROBE_MS);
    await settle();
    assert.equal(server.probes, 2, 'the next one a fast pause later');

    // Past the fast window, the pause is a second.
    for (let waited = OUTAGE_FAST_PROBE_MS; waited < OUTAGE_FAST_PROBE_WINDOW_MS; waited += OUTAGE_FAST_PROBE_MS) {
      mock.timers.tick(OUTAGE_FAST_PROBE_MS);
      await settle();
    }
    const late = server.probes;
    mock.timers.tick(OUTAGE_FAST_PROBE_MS);
    await settle();
    assert.equal(server.probes, late, 'no probe a fast pause later');
    mock.timers.tick(1000 - OUTAGE_FAST_PROBE_MS);
    await settle();
    assert.equal(server.probes, late + 1);

    server.status = 200;
    mock.timers.tick(1000);
    await settle();
    assert.equal(pool.paused, false, 'dispatch resumes on 200');
    assert.equal(outage.state.holding, false);
    outage.stop();
  });

  it('probes at the interval it was given throughout', async () => {
    const { connectivity, server, outage } = gate({ probeIntervalMs: 1000 });
    outage.start();
    connectivity.failed(refused());
    await settle();
    mock.timers.tick(OUTAGE_FAST_PROBE_MS);
    await settle();
    assert.equal(server.probes, 1);
    mock.timers.tick(1000 - OUTAGE_FAST_PROBE_MS);
    await settle();
    assert.equal(server.probes, 2);
    outage.stop();
  });
});
