import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubeApiError, listPages, Transport } from '@nestor/core';
import { TestEnvironment } from './environment.js';

// core's Transport against the real API server over each protocol it speaks: the same
// answers, errors, deadlines and aborts whichever carries them (they are written once,
// above the HTTP/1.1 pools and the HTTP/2 sessions).

let env: TestEnvironment;
before(async () => {
  env = await TestEnvironment.start();
});
after(() => env?.stop());

interface ConfigMap {
  metadata: { name: string; resourceVersion?: string };
  data?: Record<string, string>;
}

for (const protocol of ['http/1.1', 'h2'] as const) {
  describe(`Transport over ${protocol} to the API server`, () => {
    let transport: Transport;
    let base: string;
    before(async () => {
      transport = await Transport.fromKubeConfig(env.kubeConfig, { http2: protocol === 'h2' });
      base = `/api/v1/namespaces/${await env.createNamespace(protocol === 'h2' ? 'h2' : 'h1')}/configmaps`;
    });
    after(() => transport?.close());

    it('writes, reads, lists in protobuf and watches, on the protocol asked for', async () => {
      const created = await transport.json<ConfigMap>('POST', base, {
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { n: '1' } },
      });
      await transport.json('PATCH', `${base}/a`, {
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { n: '2' } },
        contentType: 'application/apply-patch+yaml',
        query: { fieldManager: 'e2e', force: true },
      });
      assert.equal(transport.protocol, protocol);
      assert.deepEqual((await transport.json<ConfigMap>('GET', `${base}/a`)).data, { n: '2' });

      const listed: ConfigMap[] = [];
      for await (const page of listPages<ConfigMap>(transport, base, { protobuf: true, pageSize: 1 })) {
        listed.push(...page.items);
      }
      assert.deepEqual(
        listed.map((c) => [c.metadata.name, c.data]),
        [['a', { n: '2' }]],
      );

      const seen: string[] = [];
      const query = { watch: true, resourceVersion: created.metadata.resourceVersion, timeoutSeconds: 30 };
      for await (const event of transport.stream<{ type: string; object: ConfigMap }>(base, query, undefined, {
        protobuf: true,
      })) {
        seen.push(`${event.type} ${event.object.data?.['n']}`);
        break;
      }
      assert.deepEqual(seen, ['MODIFIED 2']);
    });

    it('says what is missing, cuts a body at its deadline and a watch on abort, and goes on', async () => {
      const missing = await transport.json('GET', `${base}/absent`).catch((e: unknown) => e);
      assert.ok(missing instanceof KubeApiError && missing.status === 404, String(missing));

      // A watch read as a streamed request: the deadline covers its body, which never ends.
      const held = await transport.requestStreamed('GET', base, { query: { watch: true }, timeoutMs: 500 });
      const timedOut = await (async () => {
        for await (const _ of held.chunks) void _;
      })().catch((e: unknown) => e);
      held.release();
      assert.ok(timedOut instanceof KubeApiError && timedOut.reason === 'Timeout', String(timedOut));

      const abort = new AbortController();
      const reason = new Error('done');
      const watching = (async () => {
        for await (const _ of transport.stream(base, { watch: true }, abort.signal)) void _;
      })();
      setTimeout(() => abort.abort(reason), 200);
      await assert.rejects(watching, reason);

      assert.equal((await transport.request('GET', '/readyz')).status, 200);
      assert.equal(transport.connectivity.isUp, true);
    });
  });
}
