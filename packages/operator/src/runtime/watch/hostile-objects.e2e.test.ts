import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type KubeObject, type ResourceDescriptor, type RuntimeLogger, Transport } from '@nestor/core';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { ConfigMap } from '../../client/kinds.js';
import { configMapsPath } from '../../test-support/e2e-helpers.js';
import { Informer } from '../cache/informer.js';

/**
 * Objects the API server stored that no client would write: a key `__proto__` (a valid
 * ConfigMap data key) must come out as data, and an object nested past MAX_OBJECT_DEPTH
 * must never stop a watch from delivering the events after it.
 */
describe('objects that try to fool or stop the informer, from a real API server', () => {
  const errors: string[] = [];
  const logger: RuntimeLogger = { debug() {}, info() {}, warn() {}, error: (message) => errors.push(message) };

  describe('a ConfigMap with a data key __proto__', () => {
    let env: TestEnvironment;
    before(async () => {
      env = await TestEnvironment.start();
    });
    after(async () => {
      await env?.stop();
    });

    for (const protobuf of [true, false]) {
      it(`is in the informer's cache with that key as data (${protobuf ? 'protobuf' : 'JSON'}, listed and watched)`, async () => {
        const ns = await env.createNamespace('proto-key');
        // Own properties (JSON.parse makes them; a literal's `__proto__:` would set the prototype).
        const data = JSON.parse('{"__proto__":"listed","polluted":"no"}') as Record<string, string>;
        const create = (name: string, value: string) =>
          env.client.request('POST', configMapsPath(ns), {
            metadata: { name },
            data: JSON.parse(`{"__proto__":${JSON.stringify(value)},"polluted":"no"}`) as Record<string, string>,
          });
        await create('listed', 'listed');
        const transport = await Transport.fromKubeConfig(env.kubeConfig, { protobuf });
        const informer = new Informer(transport, ConfigMap, { namespace: ns, logger });
        try {
          informer.start();
          await informer.whenSynced(AbortSignal.timeout(30_000));
          await create('watched', 'watched');
          await waitFor(() => informer.get(`${ns}/watched`), { what: 'the watched ConfigMap' });
          for (const name of ['listed', 'watched']) {
            const cached = informer.get(`${ns}/${name}`)!.data as Record<string, string>;
            assert.ok(Object.hasOwn(cached, '__proto__'), `${name}: an own property`);
            assert.equal(Object.getOwnPropertyDescriptor(cached, '__proto__')?.value, name);
            assert.equal(Object.getPrototypeOf(cached), Object.prototype, 'still a plain object');
            assert.deepEqual(Object.keys(cached).sort(), Object.keys(data).sort());
            assert.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype polluted');
          }
        } finally {
          informer.stop();
          transport.close();
        }
      });
    }
  });

  describe('a Workload nested 5,000 deep in etcd (past MAX_OBJECT_DEPTH)', () => {
    const Workload: ResourceDescriptor<KubeObject> = {
      group: 'scheduling.k8s.io',
      version: 'v1beta1',
      kind: 'Workload',
      plural: 'workloads',
      namespaced: true,
    };
    let env: TestEnvironment;
    let transport: Transport;
    let ns: string;
    const path = () => `/apis/scheduling.k8s.io/v1beta1/namespaces/${ns}/workloads`;
    const create = (name: string) =>
      env.client.request('POST', path(), {
        metadata: { name },
        spec: { podGroupTemplates: [{ name: 'pg', schedulingPolicy: { basic: {} } }] },
      });

    before(async () => {
      // Workload's composite pod group templates are the one recursive message of the
      // built-in kinds; validation allows a few levels, etcd holds whatever is written.
      env = await TestEnvironment.start({
        useExistingCluster: false,
        apiServerFlags: ['--feature-gates=GenericWorkload=true', '--runtime-config=scheduling.k8s.io/v1beta1=true'],
      });
      transport = await Transport.fromKubeConfig(env.kubeConfig);
      ns = await env.createNamespace('deep');
    });
    after(async () => {
      transport?.close();
      await env?.stop();
    });

    it('is refused alone, naming it: the watch goes on and delivers later events, a new informer lists the rest', async () => {
      await create('before');
      const informer = new Informer(transport, Workload, { namespace: ns, logger });
      const failures: Error[] = [];
      try {
        informer.start();
        await informer.whenSynced(AbortSignal.timeout(30_000));
        await env.putInEtcd(`/registry/workloads/${ns}/deep`, deepWorkload(ns, 'deep', 5000));
        await create('after');
        await waitFor(() => informer.get(`${ns}/after`), { what: 'the Workload created after the deep one' });
        assert.equal(informer.get(`${ns}/deep`), undefined);
        assert.equal(informer.stats.refused, 1);
        assert.equal(informer.stats.restarts, 0, 'the same watch');
        assert.equal(informer.stats.failures, 0);
        assert.ok(
          errors.some((e) => e.includes(`Workload ${ns}/deep (resourceVersion `) && e.includes('more than 1000 deep')),
          errors.join('\n'),
        );

        // A LIST that holds it: the others are listed, the list and its watch go on.
        const fresh = new Informer(transport, Workload, {
          namespace: ns,
          logger,
          onError: (error) => failures.push(error),
        });
        try {
          fresh.start();
          await fresh.whenSynced(AbortSignal.timeout(30_000));
          assert.deepEqual(
            fresh
              .list()
              .map((w) => w.metadata?.name)
              .sort(),
            ['after', 'before'],
          );
          assert.equal(fresh.stats.refused, 1);
          await create('later');
          await waitFor(() => fresh.get(`${ns}/later`), { what: 'a Workload created after the list' });
          assert.deepEqual(failures, []);
        } finally {
          fresh.stop();
        }
      } finally {
        informer.stop();
      }
    });
  });
});

/** The bytes kube-apiserver stores for a Workload whose templates nest `depth` times. */
function deepWorkload(namespace: string, name: string, depth: number): Buffer {
  const varint = (n: number) => {
    const out: number[] = [];
    for (; n >= 0x80; n = Math.floor(n / 128)) out.push((n & 0x7f) | 0x80);
    out.push(n);
    return Buffer.from(out);
  };
  const field = (number: number, bytes: Buffer) =>
    Buffer.concat([varint((number << 3) | 2), varint(bytes.length), bytes]);
  const text = (number: number, value: string) => field(number, Buffer.from(value));
  const basic = field(2, field(1, Buffer.alloc(0))); // schedulingPolicy { basic {} }
  // Inside out, with the lengths known first: linear in the depth.
  const leaf = Buffer.concat([text(1, 'leaf'), field(8, Buffer.concat([text(1, 'pg'), basic])), basic]);
  const heads: Buffer[] = [];
  let size = leaf.length;
  for (let i = 0; i < depth; i++) {
    const head = Buffer.concat([text(1, `t${i}`), basic, varint((9 << 3) | 2), varint(size)]);
    heads.push(head);
    size += head.length;
  }
  const templates = Buffer.concat([...heads.reverse(), leaf]);
  const metadata = Buffer.concat([
    text(1, name),
    text(3, namespace),
    text(5, '00000000-0000-4000-8000-000000000001'),
    field(8, Buffer.from([0x08, ...varint(Math.floor(Date.now() / 1000))])),
  ]);
  const workload = Buffer.concat([field(1, metadata), field(2, field(3, templates))]);
  return Buffer.concat([
    Buffer.from('k8s\0'),
    field(1, Buffer.concat([text(1, 'scheduling.k8s.io/v1beta1'), text(2, 'Workload')])),
    field(2, workload),
  ]);
}
