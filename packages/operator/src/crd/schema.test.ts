import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CustomResource } from './custom-resource.decorator.js';
import { customResourceDefinition, customResourceDefinitions } from './crd-generator.js';
import { Field } from './field.decorator.js';
import { schemaOf } from './schema.js';

enum Tier {
  Basic = 'basic',
  Premium = 'premium',
}

class Port {
  @Field() name!: string;
  @Field({ type: 'integer', minimum: 1, maximum: 65535 }) port!: number;
}

class Spec {
  @Field({ type: 'integer', minimum: 1, maximum: 10, description: 'number of pods' }) size!: number;
  @Field({ type: 'integer', default: 11211 }) containerPort?: number;
  @Field() image!: string;
  @Field({ required: false }) paused?: boolean;
  @Field({ enum: Tier }) tier!: Tier;
  @Field({ enum: ['a', 'b'] as const, nullable: true }) letter?: string | null;
  @Field({ pattern: '^[a-z]+$', minLength: 1, maxLength: 20 }) slug!: string;
  @Field({ minimum: 0, maximum: 1, exclusiveMaximum: true, multipleOf: 0.25 }) ratio!: number;
  @Field(() => [Port], { listType: 'map', listMapKeys: ['name'], maxItems: 8 }) ports!: Port[];
  @Field(() => ['string'], { uniqueItems: true, minItems: 1, items: { minLength: 2 } }) tags!: string[];
  @Field({ type: 'object', mapValues: 'string', maxProperties: 5 }) labels!: Record<string, string>;
  @Field({ intOrString: true }) maxUnavailable!: number | string;
  @Field({ type: 'object', preserveUnknownFields: true }) extra!: Record<string, unknown>;
  @Field({ embeddedResource: true }) template!: object;
  @Field({ format: 'date-time' }) since!: string;
  @Field({ type: 'integer', rules: [{ rule: 'self >= 0', message: 'must not be negative' }] }) budget!: number;
}

@CustomResource({
  group: 'cache.example.com',
  version: 'v1alpha1',
  kind: 'Memcached',
  subresources: { status: {} },
  shortNames: ['mc'],
  printerColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size' }],
})
class Memcached {
  @Field(() => Spec, {
    rules: [{ rule: 'self.size <= 5 || self.tier == "premium"', message: 'more than 5 pods needs premium' }],
  })
  spec!: Spec;
}

describe('schemaOf', () => {
  const spec = schemaOf(Memcached).properties!.spec!;
  const props = spec.properties!;

  it('infers types from TypeScript metadata and takes explicit ones', () => {
    assert.deepEqual(props.image, { type: 'string' });
    assert.deepEqual(props.paused, { type: 'boolean' });
    assert.equal(props.size!.type, 'integer');
    assert.equal(props.ratio!.type, 'number');
  });

  it('marks fields required unless optional, defaulted or nullable', () => {
    assert.ok(spec.required!.includes('size'));
    assert.ok(!spec.required!.includes('containerPort'), 'a defaulted field is optional');
    assert.ok(!spec.required!.includes('paused'));
    assert.ok(!spec.required!.includes('letter'), 'a nullable field is optional');
  });

  it('carries numeric, string and array constraints', () => {
    assert.deepEqual(props.size, { type: 'integer', minimum: 1, maximum: 10, description: 'number of pods' });
    assert.deepEqual(props.containerPort, { type: 'integer', default: 11211 });
    assert.deepEqual(props.slug, { type: 'string', pattern: '^[a-z]+$', minLength: 1, maxLength: 20 });
    assert.deepEqual(props.ratio, { type: 'number', minimum: 0, maximum: 1, exclusiveMaximum: true, multipleOf: 0.25 });
    assert.deepEqual(props.tags, {
      type: 'array',
      items: { type: 'string', minLength: 2 },
      minItems: 1,
      'x-kubernetes-list-type': 'set',
    });
  });

  it('turns enums (lists and TypeScript enums) into enum lists, with nullable', () => {
    assert.deepEqual(props.tier, { type: 'string', enum: ['basic', 'premium'] });
    assert.deepEqual(props.letter!.enum, ['a', 'b']);
    assert.equal(props.letter!.nullable, true);
  });

  it('inlines nested classes, with list-map keys', () => {
    assert.deepEqual(props.ports, {
      type: 'array',
      maxItems: 8,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      items: {
        type: 'object',
        properties: { name: { type: 'string' }, port: { type: 'integer', minimum: 1, maximum: 65535 } },
        required: ['name', 'port'],
      },
    });
  });

  it('writes maps, int-or-string, preserved and embedded objects, formats and CEL rules', () => {
    assert.deepEqual(props.labels, { type: 'object', additionalProperties: { type: 'string' }, maxProperties: 5 });
    assert.deepEqual(props.maxUnavailable, { 'x-kubernetes-int-or-string': true });
    assert.deepEqual(props.extra, { type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
    assert.equal(props.template!['x-kubernetes-embedded-resource'], true);
    assert.deepEqual(props.since, { type: 'string', format: 'date-time' });
    assert.deepEqual(props.budget!['x-kubernetes-validations'], [
      { rule: 'self >= 0', message: 'must not be negative' },
    ]);
    assert.equal(spec['x-kubernetes-validations']![0]!.message, 'more than 5 pods needs premium');
  });

  // Each of these was refused by a real kube-apiserver (see crd.e2e.test.ts).
  it('writes uniqueItems as a set: the API server forbids uniqueItems: true', () => {
    assert.equal(props.tags!.uniqueItems, undefined);
    assert.equal(props.tags!['x-kubernetes-list-type'], 'set');
    class Sets {
      @Field(() => ['integer'], { uniqueItems: true, listType: 'set' }) ids!: number[];
      @Field(() => [Port], { uniqueItems: true, items: { mapType: 'atomic' } }) ports!: Port[];
    }
    const sets = schemaOf(Sets).properties!;
    assert.deepEqual(sets.ids, { type: 'array', items: { type: 'integer' }, 'x-kubernetes-list-type': 'set' });
    assert.equal(sets.ports!['x-kubernetes-list-type'], 'set');
    assert.equal(sets.ports!.items!['x-kubernetes-map-type'], 'atomic');
    class Conflict {
      @Field(() => ['string'], { uniqueItems: true, listType: 'atomic' }) names!: string[];
    }
    assert.throws(() => schemaOf(Conflict), /uniqueItems conflicts with listType "atomic"/);
  });

  it("accepts list-map keys that have a default, as the API server does (protocol in a Pod's ports)", () => {
    class ContainerPort {
      @Field({ type: 'integer' }) containerPort!: number;
      @Field({ enum: ['TCP', 'UDP'], default: 'TCP' }) protocol?: string;
    }
    class Ports {
      @Field(() => [ContainerPort], { listType: 'map', listMapKeys: ['containerPort', 'protocol'] })
      ports!: ContainerPort[];
    }
    const ports = schemaOf(Ports).properties!.ports!;
    assert.deepEqual(ports['x-kubernetes-list-map-keys'], ['containerPort', 'protocol']);
    assert.deepEqual(ports.items!.required, ['containerPort']);
    class Optional {
      @Field({ required: false }) name?: string;
    }
    class OptionalKey {
      @Field(() => [Optional], { listType: 'map', listMapKeys: ['name'] }) items!: Optional[];
    }
    assert.throws(
      () => schemaOf(OptionalKey),
      /list map keys must be required fields of the item or have a default: name/,
    );
    class UnknownKey {
      @Field(() => [Optional], { listType: 'map', listMapKeys: ['id'] }) items!: Optional[];
    }
    assert.throws(() => schemaOf(UnknownKey), /list map keys are not fields of the item: id/);
  });

  it('explains what cannot be expressed', () => {
    class Untyped {
      @Field() value!: string | number;
    }
    assert.throws(() => schemaOf(Untyped), /Untyped\.value: its type cannot be inferred/);
    class NoItems {
      @Field() list!: string[];
    }
    assert.throws(() => schemaOf(NoItems), /NoItems\.list: an array field needs its item type/);
    class Node {
      @Field(() => Node, { required: false }) next?: Node;
    }
    assert.throws(() => schemaOf(Node), /Node\.next: Node contains itself/);
    class BadMap {
      @Field(() => [Port], { listType: 'map', listMapKeys: ['port', 'protocol'] }) ports!: Port[];
    }
    assert.throws(() => schemaOf(BadMap), /list map keys are not fields of the item: protocol/);
    class Plain {
      @Field() name!: string;
    }
    class ObjectSet {
      @Field(() => [Plain], { uniqueItems: true }) items!: Plain[];
    }
    assert.throws(() => schemaOf(ObjectSet), /ObjectSet\.items: a set .* needs scalar items/);
    class KeysWithoutMap {
      @Field(() => [Plain], { listMapKeys: ['name'] }) items!: Plain[];
    }
    assert.throws(() => schemaOf(KeysWithoutMap), /listMapKeys needs listType "map"/);
    class MapOfScalars {
      @Field(() => ['string'], { listType: 'map', listMapKeys: ['name'] }) items!: string[];
    }
    assert.throws(() => schemaOf(MapOfScalars), /listType "map" needs items that are objects/);
    class AtomicString {
      @Field({ mapType: 'atomic' }) name!: string;
    }
    assert.throws(() => schemaOf(AtomicString), /mapType applies to objects/);
    class Bare {}
    class HoldsBare {
      @Field(() => Bare) bare!: Bare;
    }
    assert.throws(() => schemaOf(HoldsBare), /Bare has no @Field properties/);
  });

  it('refuses a Date, which no object read back holds: the wire has its RFC 3339 string', () => {
    class Stamped {
      @Field() at!: Date;
    }
    assert.throws(() => schemaOf(Stamped), /Stamped\.at: a Date is a string on the wire .* format: 'date-time'/);
    class StampedList {
      @Field(() => [Date]) at!: Date[];
    }
    assert.throws(() => schemaOf(StampedList), /StampedList\.at\[\]: a Date is a string on the wire/);
  });
});

describe('customResourceDefinition', () => {
  it('emits a structural apiextensions.k8s.io/v1 CRD with printer columns and Age', () => {
    const crd = customResourceDefinition(Memcached);
    assert.equal(crd.metadata.name, 'memcacheds.cache.example.com');
    assert.deepEqual(crd.spec.names, {
      plural: 'memcacheds',
      singular: 'memcached',
      kind: 'Memcached',
      listKind: 'MemcachedList',
      shortNames: ['mc'],
    });
    const [version] = crd.spec.versions;
    assert.equal(version!.storage, true);
    assert.deepEqual(version!.subresources, { status: {} });
    assert.deepEqual(
      version!.additionalPrinterColumns!.map((c) => c.name),
      ['Size', 'Age'],
    );
    const root = version!.schema.openAPIV3Schema;
    assert.deepEqual(Object.keys(root.properties!), ['apiVersion', 'kind', 'metadata', 'spec']);
    assertStructural(root as Record<string, unknown>, 'root');
  });

  it('puts several versions of a kind in one CRD with exactly one storage version', () => {
    @CustomResource({ group: 'ex.com', version: 'v1', kind: 'Thing', storage: true })
    class ThingV1 {
      @Field() name!: string;
    }
    @CustomResource({ group: 'ex.com', version: 'v1beta1', kind: 'Thing', deprecated: 'use v1' })
    class ThingV1beta1 {
      @Field() name!: string;
    }
    const crds = customResourceDefinitions([ThingV1, ThingV1beta1]);
    assert.equal(crds.length, 1);
    assert.deepEqual(
      crds[0]!.spec.versions.map((v) => [v.name, v.storage, v.deprecationWarning]),
      [
        ['v1', true, undefined],
        ['v1beta1', false, 'use v1'],
      ],
    );
    @CustomResource({ group: 'ex.com', version: 'v2', kind: 'Thing' })
    class ThingV2 {
      @Field() name!: string;
    }
    assert.throws(
      () => customResourceDefinitions([ThingV2, ThingV1beta1]),
      /has 0 storage versions .*mark exactly one version \{ storage: true \}, and give every version \(customResourceDefinition\(ThingV2, ThingV1beta1, <the others>\), or customResourceDefinitions\(allVersionsOf\(\[ThingV2\]\)\)\)/,
    );
    @CustomResource({ group: 'ex.com', version: 'v1alpha1', kind: 'Thing', storage: false })
    class ThingV1alpha1 {
      @Field() name!: string;
    }
    assert.deepEqual(
      customResourceDefinitions([ThingV2, ThingV1alpha1])[0]!.spec.versions.map((v) => [v.name, v.storage]),
      [
        ['v2', true],
        ['v1alpha1', false],
      ],
      'the only version not marked storage: false is stored',
    );
  });
});

/** Every node has a type (or is int-or-string / preserved), and there is no $ref. */
function assertStructural(node: Record<string, unknown>, path: string): void {
  assert.ok(!('$ref' in node), `${path} has a $ref`);
  assert.ok(
    'type' in node || node['x-kubernetes-int-or-string'] || node['x-kubernetes-preserve-unknown-fields'],
    `${path} has no type`,
  );
  for (const [key, child] of Object.entries((node.properties as Record<string, Record<string, unknown>>) ?? {})) {
    assertStructural(child, `${path}.${key}`);
  }
  if (node.items) assertStructural(node.items as Record<string, unknown>, `${path}[]`);
  if (node.additionalProperties) assertStructural(node.additionalProperties as Record<string, unknown>, `${path}{}`);
}
