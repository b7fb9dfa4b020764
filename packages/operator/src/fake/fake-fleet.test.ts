import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '@nestor/core';
import { ConfigMap } from '../client/kinds.js';
import type { Fleet } from '../runtime/fleet/fleet.js';
import { fakeFleet } from './fake-fleet.js';
import { FakeKubeClient } from './fake-kube-client.js';

/** A cluster-aware reconciler as a user writes it: counts each member's ConfigMaps into the management cluster. */
async function census(fleet: Fleet, local: FakeKubeClient): Promise<void> {
  const data: Record<string, string> = {};
  for (const name of fleet.names.filter((n) => n !== 'default')) {
    data[name] = String((await fleet.client(name)!.list(ConfigMap, { namespace: 'apps' })).length);
  }
  await local.apply({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { namespace: 'ops', name: 'census' },
    data,
  } as KubeObject);
}

describe('fakeFleet', () => {
  it('gives a cluster-aware reconciler each member’s client, and the local one as default', async () => {
    const east = new FakeKubeClient({
      objects: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'apps', name: 'a' } }],
    });
    const west = new FakeKubeClient();
    const local = new FakeKubeClient();
    const fleet = fakeFleet({ members: { east, west }, local, failed: { north: 'connection refused' } });
    await census(fleet, local);
    const written = await local.get<KubeObject & { data?: Record<string, string> }>(ConfigMap, {
      namespace: 'ops',
      name: 'census',
    });
    assert.deepEqual(written?.data, { east: '1', west: '0' });
    assert.equal(fleet.get('default')?.client, local);
    assert.equal(fleet.client('north'), undefined, 'a failed member has no client');
    assert.deepEqual(
      fleet.status().map((m) => [m.name, m.phase]),
      [
        ['east', 'engaged'],
        ['west', 'engaged'],
        ['north', 'failed'],
      ],
    );
  });
});
