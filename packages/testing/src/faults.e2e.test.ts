import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubeApiError, Transport } from '@nestor/core';
import { TestEnvironment } from './environment.js';
import { TcpRelay } from './tcp-relay.js';
import { waitFor } from './wait-for.js';

// The fault tools operators are tested with: the audit log as the record of writes, and a
// relay that silences or partitions connections.

let env: TestEnvironment;
before(async () => {
  env = await TestEnvironment.start({ useExistingCluster: false, auditLog: true });
});
after(() => env?.stop());

describe('fault tools', () => {
  it('records every write in the audit log, with its user, and no reads', async () => {
    const namespace = await env.createNamespace('audit');
    await env.client.request('POST', `/api/v1/namespaces/${namespace}/configmaps`, { metadata: { name: 'audited' } });
    await env.client.request('GET', `/api/v1/namespaces/${namespace}/configmaps/audited`);
    const events = await waitFor(
      async () => {
        const all = await env.auditEvents();
        return all.some((e) => e.objectRef?.name === 'audited') ? all : undefined;
      },
      { what: 'the create in the audit log' },
    );
    const mine = events.filter((e) => e.objectRef?.namespace === namespace && e.objectRef?.resource === 'configmaps');
    assert.deepEqual(
      mine.map((e) => [e.verb, e.objectRef?.name, e.responseStatus?.code]),
      [['create', 'audited', 201]],
    );
    assert.ok(mine[0]!.user.username, 'the writer is named');
  });

  it('partitions a client from the API server and heals it', async () => {
    const relay = await TcpRelay.start(env.server);
    const transport = await Transport.fromKubeConfig(relay.kubeConfig(env.kubeConfig), { requestTimeoutMs: 1_000 });
    try {
      assert.equal((await transport.request('GET', '/readyz')).status, 200);
      relay.partition();
      await assert.rejects(transport.json('GET', '/readyz'), (error: unknown) => {
        assert.ok(error instanceof KubeApiError && error.status === 0, String(error));
        return true;
      });
      assert.equal(transport.connectivity.isUp, false);
      relay.heal();
      assert.equal((await transport.request('GET', '/readyz')).status, 200);
      assert.equal(transport.connectivity.isUp, true);
    } finally {
      transport.close();
      await relay.close();
    }
  });
});
