import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject, RequestOptions, ResourceDescriptor, Transport } from '@nestor/core';
import { HttpKubeClient } from './http-kube-client.js';

const SHARD = 'shard.nestor.dev/pool';

function recordingTransport() {
  const sent: Array<{ method: string; path: string; body: KubeObject }> = [];
  const transport = {
    json: async (method: string, path: string, options: RequestOptions = {}) => {
      sent.push({ method, path, body: options.body as KubeObject });
      return {};
    },
  } as unknown as Transport;
  return { transport, sent };
}

const owner = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'ns', name: 'o', uid: 'u-o' } };
const child = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: {
    namespace: 'ns',
    name,
    labels: { app: 'x' },
    ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'o', uid: 'u-o', controller: true }],
  },
});

describe('HttpKubeClient childLabels', () => {
  it('adds the labels to what it creates, replaces and applies, in the same request, without changing the caller’s object', async () => {
    const { transport, sent } = recordingTransport();
    const asked: string[] = [];
    const kube = new HttpKubeClient(transport, {
      childLabels: (object: KubeObject, resource: ResourceDescriptor) => {
        asked.push(`${resource.plural}/${object.metadata?.name}`);
        return object.metadata?.ownerReferences?.length ? { [SHARD]: 'a' } : undefined;
      },
    });
    const created = child('c1');
    await kube.create(created);
    await kube.replace(child('c2'));
    await kube.apply({ apiVersion: 'v1', kind: 'Secret', metadata: { namespace: 'ns', name: 'c3' } }, { owner });
    await kube.scoped({ controller: 'x' }).apply(child('c4'));
    await kube.create({ apiVersion: 'v1', kind: 'Secret', metadata: { namespace: 'ns', name: 'free' } });
    assert.equal(sent.length, 5, 'one request per write');
    assert.deepEqual(
      sent.map((s) => s.body.metadata?.labels?.[SHARD]),
      ['a', 'a', 'a', 'a', undefined],
    );
    assert.equal(sent[0]!.body.metadata?.labels?.['app'], 'x', 'the object’s own labels stay');
    assert.deepEqual(created.metadata?.labels, { app: 'x' }, 'the caller’s object is not changed');
    assert.deepEqual(asked, ['secrets/c1', 'secrets/c2', 'secrets/c3', 'secrets/c4', 'secrets/free']);
  });

  it('leaves an apply without force alone: the label would conflict with the hand-over’s write of it', async () => {
    const { transport, sent } = recordingTransport();
    const kube = new HttpKubeClient(transport, { childLabels: () => ({ [SHARD]: 'a' }) });
    await kube.apply(child('c1'), { force: false });
    assert.equal(sent[0]!.body.metadata?.labels?.[SHARD], undefined);
  });
});
