import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Field } from './field.decorator.js';
import { SCHEMA_CONSTRAINT_KEYS, type SchemaConstraints } from './schema-constraints.js';
import { schemaOf } from './schema.js';

/** A value for every keyword: Required<> makes the compiler name one that is missing here. */
const EVERY: Required<SchemaConstraints> = {
  description: 'a described value',
  nullable: true,
  default: 'seven',
  format: 'hostname',
  minimum: 1,
  maximum: 9,
  exclusiveMinimum: true,
  exclusiveMaximum: true,
  multipleOf: 2,
  minLength: 3,
  maxLength: 30,
  pattern: '^[a-z]+$',
  minItems: 1,
  maxItems: 4,
  minProperties: 1,
  maxProperties: 5,
};

class Everything {
  @Field({ type: 'string', ...EVERY }) value?: string;
  @Field(() => ['string'], { items: EVERY }) list!: string[];
  @Field({ type: 'object', mapValues: { type: 'string', ...EVERY } }) map!: Record<string, string>;
}

describe('schema constraints', () => {
  const schema = schemaOf(Everything).properties!;

  it('copies every pass-through keyword set on a @Field into its schema node, as it is', () => {
    assert.deepEqual(schema.value, { type: 'string', ...EVERY });
  });

  it('copies them into array items and map values too', () => {
    assert.deepEqual(schema.list!.items, { type: 'string', ...EVERY });
    assert.deepEqual(schema.map!.additionalProperties, { type: 'string', ...EVERY });
  });

  it('lists each keyword of SchemaConstraints once', () => {
    assert.deepEqual([...SCHEMA_CONSTRAINT_KEYS].sort(), Object.keys(EVERY).sort());
  });
});
