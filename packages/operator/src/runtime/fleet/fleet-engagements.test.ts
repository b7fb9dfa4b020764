import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { silentLogger, type Transport } from '@nestor/core';
import { FakeWatchTransport } from '../../test-support/fake-watch-transport.js';
import { InformerCache } from '../cache/informer-cache.js';
import { Manager } from '../manager/manager.js';
import type { ClusterProvider, ProviderContext } from './cluster-provider.js';
import type { Engagement } from './engagement.js';
import { Fleet } from './fleet.js';

const manager = () =>
  new Manager({ transport: {} as Transport, informers: new InformerCache(new FakeWatchTransport()) });
/** A kubeconfig that cannot connect: every attempt fails at once. */
const nowhere = { kubeConfig: 'unused' as never };

describe("a fleet's engagements$", () => {
  it('tells each member named, failed, refused and disengaged, and completes when the fleet stops', async () => {
    const fleet = new Fleet(manager(), { providers: [], retry: { initialMs: 60_000, maxMs: 60_000 } });
    const told: Engagement[] = [];
    let completed = false;
    fleet.engagements$.subscribe({ next: (e) => told.push(e), complete: () => (completed = true) });

    fleet.engage('east', nowhere);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      told.map((e) => `${e.cluster} ${e.type}`),
      ['east connecting', 'east failed'],
    );
    assert.ok(told[1]!.error, 'the failure says why');

    fleet.refuse('west', new Error('no data key "kubeconfig"'));
    fleet.disengage('east');
    assert.deepEqual(told.slice(2), [
      { cluster: 'west', type: 'failed', error: 'no data key "kubeconfig"' },
      { cluster: 'east', type: 'disengaged' },
    ]);
    fleet.engage('north', nowhere);
    await fleet.stop(0);
    assert.deepEqual(
      told.slice(4).map((e) => `${e.cluster} ${e.type}`),
      ['north connecting', 'north disengaged'],
    );
    assert.ok(completed);
  });

  it("gives providers the operator's namespace, resolved when they start", async () => {
    const seen: string[] = [];
    const provider: ClusterProvider = {
      name: 'spy',
      run: (_fleet, _cluster, _signal, context: ProviderContext) => void seen.push(context.operatorNamespace),
    };
    const fleet = new Fleet(manager(), {
      providers: [provider],
      operatorNamespace: 'teams-system',
      logger: silentLogger,
    });
    assert.equal(seen.length, 0, 'not when the fleet is made');
    fleet.start();
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(seen, ['teams-system']);
    await fleet.stop(0);
  });
});
