// A Nest application over a fleet: OperatorModule's `fleet` option with a KubeconfigSecrets
// provider; a uniform @Controller(Kind, { clusters: 'members' }) whose context names each
// run's member and whose ctx.client writes there; and a cluster-aware controller of the
// management cluster that injects the Fleet and maps a kind watched in the members
// (@Watches(Kind, { clusters: 'members' })). One management and one member control plane.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { INestApplicationContext } from '@nestjs/common';
import { TestEnvironment, waitFor } from '@nestor/testing';
import {
  ConfigMap,
  Controller,
  Fleet,
  Reconcile,
  Watches,
  type ObjectRef,
  type ReconcileContext,
  type ResourceEvent,
} from '../index.js';
import { KUBECONFIG_SECRET_LABEL, KubeconfigSecrets } from '../runtime/fleet/index.js';
import { configMapsPath, createConfigMap, serviceAccountKubeConfig } from '../test-support/e2e-helpers.js';
import { bootOperatorApp } from '../test-support/operator-app.js';

const FLEET_NS = 'fleet-system';
const APPS = 'apps';

@Controller(ConfigMap, { namespace: APPS, clusters: 'members' })
class MemberSettings {
  @Reconcile()
  async reconcile(cm: V1ConfigMap, ctx: ReconcileContext): Promise<void> {
    if (cm.metadata?.annotations?.['nestor.test/cluster'] === ctx.cluster) return;
    await ctx.client.patch(ConfigMap, ctx.request, {
      metadata: { annotations: { 'nestor.test/cluster': ctx.cluster } },
    });
  }
}

@Controller(ConfigMap, { namespace: FLEET_NS, fieldSelector: 'metadata.name=census' })
class Census {
  readonly mappedFrom = new Set<string>();

  constructor(private readonly fleet: Fleet) {}

  @Reconcile()
  async reconcile(cm: V1ConfigMap, ctx: ReconcileContext): Promise<void> {
    const data: Record<string, string> = {};
    for (const name of this.fleet.names.filter((n) => n !== ctx.cluster)) {
      data[name] = String((await this.fleet.get(name)!.client.list(ConfigMap, { namespace: APPS })).length);
    }
    await ctx.client.patch(ConfigMap, ctx.request, { data });
  }

  @Watches(ConfigMap, { namespace: APPS, clusters: 'members' })
  fromMembers(_cm: V1ConfigMap, event: ResourceEvent<V1ConfigMap>): ObjectRef {
    this.mappedFrom.add(event.cluster!);
    return { namespace: FLEET_NS, name: 'census' };
  }
}

let management: TestEnvironment;
let member: TestEnvironment;
let app: INestApplicationContext | undefined;

before(async () => {
  [management, member] = (await Promise.all(
    [0, 1].map(() => TestEnvironment.start({ useExistingCluster: false })),
  )) as [TestEnvironment, TestEnvironment];
  await management.client.request('POST', '/api/v1/namespaces', { metadata: { name: FLEET_NS } });
  await member.client.request('POST', '/api/v1/namespaces', { metadata: { name: APPS } });
});
after(async () => {
  await app?.close();
  await Promise.all([management?.stop(), member?.stop()]);
});

describe('OperatorModule with a fleet', () => {
  it('runs a members controller in each member and a cluster-aware one on the management cluster', async () => {
    const { kubeConfig } = await serviceAccountKubeConfig(member, APPS, 'operator');
    await management.client.request('POST', `/api/v1/namespaces/${FLEET_NS}/secrets`, {
      metadata: { name: 'east', labels: { [KUBECONFIG_SECRET_LABEL]: 'true' } },
      data: { kubeconfig: Buffer.from(kubeConfig.exportConfig()).toString('base64') },
    });
    await createConfigMap(management.client, FLEET_NS, 'census', { data: {} });
    await createConfigMap(member.client, APPS, 'settings', { data: { v: '1' } });
    app = await bootOperatorApp({
      kubeConfig: management.kubeConfig,
      providers: [MemberSettings, Census],
      fleet: { providers: [new KubeconfigSecrets({ namespace: FLEET_NS })], retry: { initialMs: 200, maxMs: 1_000 } },
    });
    await waitFor(
      async () => {
        const cm = await member.client.request<V1ConfigMap>('GET', configMapsPath(APPS, 'settings'));
        return cm.metadata?.annotations?.['nestor.test/cluster'] === 'east';
      },
      { timeoutMs: 60_000, what: 'the member ConfigMap reconciled in cluster east, by its own client' },
    );
    await createConfigMap(member.client, APPS, 'more', { data: {} });
    await waitFor(
      async () => {
        const cm = await management.client.request<V1ConfigMap>('GET', configMapsPath(FLEET_NS, 'census'));
        return cm.data?.['east'] === '2';
      },
      { what: "the census to count the member's ConfigMaps after one was added there" },
    );
    assert.deepEqual([...app.get(Census).mappedFrom], ['east']);
    assert.deepEqual(app.get(Fleet).names.sort(), ['default', 'east']);
  });
});
