import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { type KubeObject, Transport } from '@nestor/core';
import { ConfigMap } from '../../client/kinds.js';
import { configMapsPath, createConfigMap, parallel, patchConfigMap } from '../../test-support/e2e-helpers.js';
import { Manager } from '../manager/manager.js';

type Cm = KubeObject & { data?: Record<string, string> };
const OBSERVED = 'nestor.test/observed';

describe('the echoes of a controller’s own writes, against a real API server', () => {
  let env: TestEnvironment;
  let transport: Transport;
  before(async () => {
    env = await TestEnvironment.start({ useExistingCluster: false });
    transport = await Transport.fromKubeConfig(env.kubeConfig);
  });
  after(async () => {
    transport?.close();
    await env?.stop();
  });

  it('runs the changes made elsewhere before the reconciles its own writes requested', async () => {
    const ns = await env.createNamespace('echoes');
    const names = Array.from({ length: 20 }, (_, i) => `cm-${i}`);
    await parallel(names, 8, (name) => createConfigMap(env.client, ns, name, { data: { v: '0' } }));
    /** Each run: whether it had work (a spec it had not observed) or only read its own write back. */
    const runs: Array<'change' | 'echo'> = [];
    let written = 0;
    const manager = new Manager({ transport, concurrency: 1 });
    manager.addController<Cm>({
      name: 'observer',
      resource: ConfigMap as never,
      namespace: ns,
      maxConcurrentReconciles: 1,
      reconcile: async ({ object, ref, client }) => {
        const v = object?.data?.['v'];
        if (v === undefined || object?.metadata?.annotations?.[OBSERVED] === v) {
          runs.push('echo');
          return;
        }
        runs.push('change');
        await sleep(120); // the work: slower than the changes come in
        await client.patch(ConfigMap, ref, { metadata: { annotations: { [OBSERVED]: v } } });
        written++;
      },
    });
    await manager.start();
    try {
      await waitFor(() => written === names.length && runs.length >= 2 * names.length, {
        timeoutMs: 60_000,
        what: 'every object reconciled, and its write read back',
      });
      runs.length = 0;
      written = 0;
      // The specs change one by one, faster than the controller works through them: as each
      // write's echo comes back, changes are waiting. In arrival order (client-go's FIFO) a
      // third or so of the echoes would run before the last change; queued behind the
      // changes, none does but an echo whose watch event came before its write's answer
      // (a few percent: that one is not told apart, and runs at normal priority).
      for (const name of names) {
        await patchConfigMap(env.client, ns, name, { data: { v: '1' } });
        await sleep(40);
      }
      await waitFor(() => written === names.length && runs.filter((r) => r === 'echo').length >= names.length, {
        timeoutMs: 60_000,
        what: 'every change reconciled, and every write read back',
      });
      const lastChange = runs.lastIndexOf('change');
      const early = runs.slice(0, lastChange).filter((r) => r === 'echo').length;
      assert.ok(early <= 2, `${early} echoes ran while changes waited: ${runs.join(' ')}`);
      const current = await env.client.request<{ items: Cm[] }>('GET', configMapsPath(ns));
      assert.ok(current.items.every((cm) => cm.metadata?.annotations?.[OBSERVED] === '1'));
    } finally {
      await manager.stop();
    }
  });
});
