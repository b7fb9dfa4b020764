import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Secret } from '@kubernetes/client-node';
import { silentLogger } from '@nestor/core';
import { Subject } from 'rxjs';
import type { ResourceEvent } from '../cache/resource-event.js';
import type { Cluster } from '../manager/cluster.js';
import type { ClusterSink } from './cluster-provider.js';
import { KUBECONFIG_SECRET_LABEL, KubeconfigSecrets } from './kubeconfig-secrets.js';

const kubeconfig = (server: string) =>
  [
    `clusters: [{ name: c, cluster: { server: "${server}" } }]`,
    'users: [{ name: u, user: { token: abc } }]',
    'contexts: [{ name: x, context: { cluster: c, user: u } }]',
    'current-context: x',
  ].join('\n');

const secret = (name: string, server = `https://${name}.example:6443`): V1Secret => ({
  metadata: { name, namespace: 'fleet-system', labels: { [KUBECONFIG_SECRET_LABEL]: 'true' } },
  data: { kubeconfig: Buffer.from(kubeconfig(server)).toString('base64') },
});

/** A management cluster whose Secret informer holds `held` already, as one shared with another watch does. */
function management(held: V1Secret[]) {
  const events$ = new Subject<ResourceEvent<V1Secret>>();
  const selectors: unknown[] = [];
  let released = 0;
  const cluster = {
    informers: {
      acquire: (_resource: unknown, selector: unknown) => {
        selectors.push(selector);
        return { informer: { events$, list: () => held }, release: () => void released++ };
      },
    },
  } as unknown as Cluster;
  return { cluster, events$, selectors, released: () => released };
}

function sink() {
  const calls: string[] = [];
  const fleet: ClusterSink = {
    engage: (name, target) => void calls.push(`engage ${name} ${target.source?.kind}/${target.source?.name}`),
    disengage: (name) => void calls.push(`disengage ${name}`),
    refuse: (name, error) => void calls.push(`refuse ${name}: ${error.message}`),
  };
  return { fleet, calls };
}

describe('KubeconfigSecrets', () => {
  it('engages the Secrets its informer already holds (shared and synced), then follows its events', () => {
    const { cluster, events$, selectors, released } = management([secret('east')]);
    const { fleet, calls } = sink();
    const abort = new AbortController();
    new KubeconfigSecrets({ namespace: 'fleet-system' }).run(fleet, cluster, abort.signal);
    assert.deepEqual(selectors, [{ namespace: 'fleet-system', labelSelector: `${KUBECONFIG_SECRET_LABEL}=true` }]);
    assert.deepEqual(calls, ['engage east Secret/east']);

    events$.next({ type: 'added', object: secret('west') });
    events$.next({ type: 'deleted', object: secret('east') });
    assert.deepEqual(calls, ['engage east Secret/east', 'engage west Secret/west', 'disengage east']);

    abort.abort();
    events$.next({ type: 'added', object: secret('north') });
    assert.equal(calls.length, 3, 'nothing after the abort');
    assert.equal(released(), 1);
  });

  it('refuses a Secret without the kubeconfig key, naming it', () => {
    const { cluster } = management([{ metadata: { name: 'bare' }, data: {} }]);
    const { fleet, calls } = sink();
    new KubeconfigSecrets({ namespace: 'fleet-system' }).run(fleet, cluster, new AbortController().signal);
    assert.deepEqual(calls, ['refuse bare: Secret fleet-system/bare has no data key "kubeconfig"']);
  });

  it("reads the operator's namespace when given none, found when it runs, and asks for its rights there", () => {
    const { cluster, selectors } = management([]);
    const provider = new KubeconfigSecrets();
    const context = { operatorNamespace: 'teams-system', logger: silentLogger };
    provider.run(sink().fleet, cluster, new AbortController().signal, context);
    assert.deepEqual(selectors, [{ namespace: 'teams-system', labelSelector: `${KUBECONFIG_SECRET_LABEL}=true` }]);
    assert.equal(provider.permissions({ operatorNamespace: 'teams-system' })[0]!.namespace, 'teams-system');
    assert.throws(() => provider.permissions(), /reads the operator's own, and none was given/);
  });
});
