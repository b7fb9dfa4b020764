import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CustomResource } from './custom-resource.decorator.js';
import type { AsWritten, Defaulted } from './defaulted.js';
import { Field } from './field.decorator.js';
import type { Quantity } from './quantity.js';
import { schemaOf } from './schema.js';

class Storage {
  @Field({ quantity: true, default: '1Gi' }) size!: Defaulted<Quantity>;
  @Field({ required: false }) className?: string;
}

class ClusterSpec {
  @Field({ minLength: 1 }) name!: string;
  @Field({ type: 'integer', minimum: 1, default: 3 }) replicas!: Defaulted<number>;
  @Field({ default: 'redis:7.4' }) image!: Defaulted<string>;
  @Field({ default: false }) paused!: Defaulted<boolean>;
  @Field({ enum: ['allkeys-lru', 'noeviction'], default: 'allkeys-lru' }) policy!: Defaulted<
    'allkeys-lru' | 'noeviction'
  >;
  @Field(() => Storage, { default: {} }) storage!: Defaulted<Storage>;
  @Field({ required: false }) note?: string;
  @Field({ type: 'integer', nullable: true, default: 5 }) ttl!: Defaulted<number | null>;
  @Field({ type: 'string', enum: ['gold', 'silver'], defaultedBy: 'webhook' }) tier!: Defaulted<'gold' | 'silver'>;
}

@CustomResource({ group: 'defaults.nestor.dev', version: 'v1', kind: 'Cluster' })
class Cluster {
  metadata?: { name?: string };
  @Field(() => ClusterSpec) spec!: ClusterSpec;
}

describe('Defaulted fields', () => {
  const spec = schemaOf(Cluster).properties!.spec!;

  it('are optional in the schema: only the writer may leave them out', () => {
    assert.deepEqual(spec.required, ['name']);
    // Filled by a mutating webhook: optional, with no schema default.
    assert.deepEqual(spec.properties!.tier, { type: 'string', enum: ['gold', 'silver'] });
    assert.deepEqual(spec.properties!.ttl, { type: 'integer', nullable: true, default: 5 });
    assert.deepEqual(spec.properties!.storage!.required, undefined);
  });

  it('take their JSON type from the default where TypeScript emits none for Defaulted<T>', () => {
    assert.deepEqual(spec.properties!.image, { type: 'string', default: 'redis:7.4' });
    assert.deepEqual(spec.properties!.paused, { type: 'boolean', default: false });
    assert.deepEqual(spec.properties!.replicas, { type: 'integer', minimum: 1, default: 3 });
    assert.deepEqual(spec.properties!.policy, {
      type: 'string',
      enum: ['allkeys-lru', 'noeviction'],
      default: 'allkeys-lru',
    });
    assert.equal(spec.properties!.storage!.properties!.size!.default, '1Gi');
  });

  it('read as present values, and AsWritten<T> makes them optional for the writer (checked by the compiler)', () => {
    const read: Cluster = {
      spec: {
        name: 'a',
        replicas: 3,
        image: 'redis:7.4',
        paused: false,
        policy: 'noeviction',
        storage: { size: '1Gi' },
        ttl: null,
        tier: 'gold',
      },
    };
    // What the reconciler reads needs no `??`: these are plain values.
    const replicas: number = read.spec.replicas + 1;
    const image: string = read.spec.image.toUpperCase();
    const size: Quantity = read.spec.storage.size;
    assert.deepEqual([replicas, image, size], [4, 'REDIS:7.4', '1Gi']);

    const written: AsWritten<Cluster> = { spec: { name: 'b' } };
    const withStorage: AsWritten<Cluster> = { spec: { name: 'c', storage: {}, note: 'optional stays optional' } };
    // @ts-expect-error a field without a default is still required of the writer
    const missing: AsWritten<Cluster> = { spec: { replicas: 1 } };
    // @ts-expect-error a read object is not missing its defaulted fields
    const unread: Cluster = { spec: { name: 'd' } };
    assert.ok(written && withStorage && missing && unread);
  });

  it('keep enums, literals, booleans and null as they are, for the reader and the writer (checked by the compiler)', () => {
    // @ts-expect-error a defaulted enum takes its values only, not any string
    const wrongPolicy: AsWritten<Cluster> = { spec: { name: 'e', policy: 'allkeys-lfu' } };
    // @ts-expect-error nor a value of another type
    const wrongPaused: AsWritten<Cluster> = { spec: { name: 'e', paused: 'no' } };
    // @ts-expect-error a webhook-defaulted field is typed as any other
    const wrongTier: AsWritten<Cluster> = { spec: { name: 'e', tier: 'bronze' } };
    // A nullable defaulted field keeps its null, written and read.
    const nulls: AsWritten<Cluster> = { spec: { name: 'e', ttl: null, policy: 'noeviction', tier: 'silver' } };
    const ttl: number | null = ({ spec: { ...nulls.spec, ttl: null } } as Cluster).spec.ttl;
    // @ts-expect-error but a field that is not nullable does not take null
    const nullPolicy: AsWritten<Cluster> = { spec: { name: 'e', policy: null } };
    const tier: 'gold' | 'silver' = ({ spec: { tier: 'gold' } } as Cluster).spec.tier;
    assert.deepEqual([ttl, tier], [null, 'gold']);
    assert.ok(wrongPolicy && wrongPaused && wrongTier && nullPolicy);
  });

  it('refuses a webhook default with a schema default, or required', () => {
    class Both {
      @Field({ type: 'integer', default: 1, defaultedBy: 'webhook' }) size!: Defaulted<number>;
    }
    assert.throws(() => schemaOf(Both), /Both\.size: a field with a schema default is not defaultedBy: 'webhook'/);
    class Required {
      @Field({ type: 'integer', required: true, defaultedBy: 'webhook' }) size!: Defaulted<number>;
    }
    assert.throws(() => schemaOf(Required), /Required\.size: a field the webhook defaults .* cannot be required/);
  });
});
