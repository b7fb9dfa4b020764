import assert from 'node:assert/strict';
import { request } from 'node:http';
import { describe, it } from 'node:test';
import { freePort } from '@nestor/testing';
import type { ManagerHealth } from '../runtime/manager/manager.js';
import { MetricsAndProbesServer } from './metrics-and-probes-server.js';

function get(port: number, path: string): Promise<{ status: number; text: string; type: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, type: String(res.headers['content-type']) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const registry = { contentType: 'text/plain; version=0.0.4', scrape: async () => 'up 1\n' };

describe('MetricsAndProbesServer', () => {
  it('serves the registry and the manager’s probes, with the extra readiness checks', async () => {
    let health: ManagerHealth = { live: true, ready: true, checks: [{ name: 'manager', ok: true }] };
    let webhookReady = false;
    const server = new MetricsAndProbesServer({
      manager: { health: () => health },
      registry,
      readiness: [
        { healthCheck: () => ({ name: 'webhook-server', ok: webhookReady, ...(webhookReady ? {} : { detail: 'x' }) }) },
      ],
      metrics: { secure: false, host: '127.0.0.1', port: await freePort() },
      health: { host: '127.0.0.1', port: await freePort() },
    });
    await server.start();
    try {
      const { metrics, health: probes } = server.addresses;
      assert.ok(metrics && probes && metrics !== probes, 'two ports');
      assert.deepEqual(await get(metrics, '/metrics'), { status: 200, text: 'up 1\n', type: registry.contentType });
      assert.equal((await get(probes, '/healthz')).status, 200);
      const notReady = await get(probes, '/readyz');
      assert.equal(notReady.status, 503);
      assert.match(notReady.text, /^\[-\]webhook-server failed$/m);
      assert.doesNotMatch(notReady.text, /x$/m, 'never why');
      webhookReady = true;
      assert.equal((await get(probes, '/readyz')).status, 200);
      health = { live: false, ready: false, checks: [{ name: 'manager', ok: false, detail: 'stopped' }] };
      assert.equal((await get(probes, '/healthz')).status, 503);
      assert.equal((await get(probes, '/metrics')).status, 404, 'each port serves its own paths');
    } finally {
      await server.stop();
    }
  });

  it('says what is missing: a registry for /metrics, a transport for its authorization', async () => {
    const manager = { health: (): ManagerHealth => ({ live: true, ready: true, checks: [] }) };
    await assert.rejects(
      new MetricsAndProbesServer({ manager, metrics: { secure: false }, health: { port: 0 } }).start(),
      /\/metrics needs a registry \(OperatorMetrics\), or set metrics.port to 0/,
    );
    await assert.rejects(
      new MetricsAndProbesServer({ manager, registry, health: { port: 0 } }).start(),
      /metrics.auth asks the API server about each caller: give it the operator’s Transport/,
    );
  });
});
