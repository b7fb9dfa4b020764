// Issue 44: after an outage, work resumes within seconds of the API server answering, not
// when the watch's backoff ends. A watch that failed during the outage waits its backoff or
// the outage gate's word that /readyz says 200, whichever comes first (bench/outage.mjs
// measures the wait after outages of 10 s to 5 min, beside controller-runtime, whose
// reflector waits its backoff: up to 60 s).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Transport } from '@nestor/core';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { ConfigMap } from '../../client/kinds.js';
import { createConfigMap, patchConfigMap } from '../../test-support/e2e-helpers.js';
import { InformerCache } from '../cache/informer-cache.js';
import { Manager } from './manager.js';

let env: TestEnvironment;
before(async () => {
  // Its own control plane: the test stops the API server.
  env = await TestEnvironment.start({ useExistingCluster: false });
});
after(() => env?.stop());

describe('a manager whose API server goes away and comes back', () => {
  it('reconciles a change made once the server is ready, while its watch backoff has minutes to run', async () => {
    const namespace = await env.createNamespace('resume');
    await createConfigMap(env.client, namespace, 'watched', { data: { round: '0' } });
    const transport = await Transport.fromKubeConfig(env.kubeConfig);
    // A backoff no test would wait for: the watch that fails during the outage is opened
    // again only because the outage gate's probe finds the server ready.
    const informers = new InformerCache(transport, { backoff: { initialMs: 600_000, maxMs: 600_000 } });
    const manager = new Manager({ transport, informers });
    const seen: string[] = [];
    manager.addController({
      name: 'resume',
      resource: ConfigMap,
      namespace,
      reconcile: ({ object }) => void seen.push(object?.data?.round ?? ''),
    });
    try {
      await manager.start();
      await waitFor(() => seen.includes('0'), { what: 'the first reconcile' });

      await env.stopApiServer({ kill: true });
      await waitFor(() => informers.all().some((i) => i.stats.failures > 0), {
        timeoutMs: 15_000,
        what: 'the watch to fail while the server is down',
      });
      assert.equal(manager.outage.state.holding, true, 'the gate holds and probes /readyz');
      // A few seconds down: the watch is in its ten-minute wait.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      await env.startApiServer();

      await patchConfigMap(env.client, namespace, 'watched', { data: { round: '1' } });
      await waitFor(() => seen.includes('1'), {
        timeoutMs: 20_000,
        what: 'the change made after the outage reconciled (the watch backoff: 10 min)',
      });
      assert.equal(manager.outage.state.holding, false);
    } finally {
      await manager.stop();
      transport.close();
    }
  });
});
