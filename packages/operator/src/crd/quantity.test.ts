import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Field } from './field.decorator.js';
import {
  compareQuantities,
  isQuantity,
  MAX_QUANTITY_LENGTH,
  QUANTITY_PATTERN,
  QuantityError,
  quantityToNumber,
  type Quantity,
} from './quantity.js';
import { SchemaError, schemaOf } from './schema.js';

describe('quantityToNumber', () => {
  it('reads binary and decimal suffixes, fractions, exponents and signs as apimachinery does', () => {
    const cases: Array<[Quantity, number]> = [
      ['1Gi', 1024 ** 3],
      ['512Mi', 512 * 1024 ** 2],
      ['1.5Gi', 1.5 * 1024 ** 3],
      ['1G', 1e9],
      ['500m', 0.5],
      ['250u', 0.00025],
      ['2', 2],
      [2, 2],
      ['1e3', 1000],
      ['1E3', 1000],
      ['1E', 1e18],
      ['.5', 0.5],
      ['5.', 5],
      ['+3k', 3000],
      ['-2Ki', -2048],
      ['1.5e-3', 0.0015],
      ['8Ei', 8 * 2 ** 60],
    ];
    for (const [value, expected] of cases) assert.equal(quantityToNumber(value), expected, String(value));
  });

  it('refuses what is not a quantity, saying what one looks like', () => {
    for (const bad of ['1GB', '1 Gi', 'Gi', '', '.', '1e', '1e1.5', 'ten', '1Gi ', '0x10']) {
      assert.throws(() => quantityToNumber(bad), QuantityError, bad);
      assert.equal(isQuantity(bad), false, bad);
    }
    assert.throws(() => quantityToNumber('1GB'), /"1GB" is not a Kubernetes quantity: expected digits .* e\.g\. 1Gi/);
    assert.throws(() => quantityToNumber(Number.NaN), /must be finite/);
    assert.equal(isQuantity(undefined), false);
    assert.equal(isQuantity({}), false);
  });

  it('bounds the work: long strings and huge exponents are refused', () => {
    assert.throws(() => quantityToNumber('1'.repeat(MAX_QUANTITY_LENGTH + 1)), /longer than 64 characters/);
    assert.throws(() => compareQuantities('1e999999999', '1'), /exponent is beyond ±100/);
    assert.equal(compareQuantities('1e100', '1e99'), 1);
  });
});

describe('compareQuantities', () => {
  it('compares exactly across spellings and units', () => {
    assert.equal(compareQuantities('1Gi', '1024Mi'), 0);
    assert.equal(compareQuantities('1Gi', 1073741824), 0);
    assert.equal(compareQuantities('1G', '1Gi'), -1);
    assert.equal(compareQuantities('2Gi', '1Gi'), 1);
    assert.equal(compareQuantities('0.1', '100m'), 0);
    assert.equal(compareQuantities('-1', '1'), -1);
    assert.equal(compareQuantities('-2', '-1'), -1);
    assert.equal(compareQuantities('-0', '0'), 0);
    // Past 2^53 a JavaScript number cannot tell them apart; the comparison can.
    assert.equal(compareQuantities('9007199254740993', '9007199254740992'), 1);
  });

  it('agrees with the numbers for integers of bytes in any binary unit (property)', () => {
    const units = ['', 'Ki', 'Mi', 'Gi', 'Ti'] as const;
    const quantity = fc
      .tuple(fc.integer({ min: 0, max: 1_000_000 }), fc.constantFrom(...units))
      .map(([n, unit]) => ({ text: `${n}${unit}`, bytes: BigInt(n) * 1024n ** BigInt(units.indexOf(unit)) }));
    fc.assert(
      fc.property(quantity, quantity, (a, b) => {
        const expected = a.bytes === b.bytes ? 0 : a.bytes < b.bytes ? -1 : 1;
        assert.equal(compareQuantities(a.text, b.text), expected);
        assert.equal(compareQuantities(b.text, a.text), -expected || 0);
      }),
      { numRuns: 300 },
    );
  });

  it('accepts what the API server’s pattern accepts (property)', () => {
    const pattern = new RegExp(QUANTITY_PATTERN);
    // But for a fractional exponent: the pattern lets it through, apimachinery's parser refuses it.
    assert.ok(pattern.test('1e1.5') && !isQuantity('1e1.5'));
    const text = fc.stringMatching(/^[+-]?[0-9]{0,4}(\.[0-9]{0,3})?([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]{1,2})?$/);
    fc.assert(
      fc.property(text, (value) => {
        assert.equal(isQuantity(value), pattern.test(value), value);
      }),
      { numRuns: 300 },
    );
  });
});

describe('@Field({ quantity: true })', () => {
  class Volume {
    @Field({ quantity: true, default: '1Gi', description: 'size of the volume' }) size?: Quantity;
    @Field({ type: 'object', mapValues: { quantity: true }, required: false }) limits?: Record<string, Quantity>;
  }

  it('is int-or-string with the quantity pattern, as controller-gen writes resource.Quantity', () => {
    const { properties } = schemaOf(Volume);
    assert.deepEqual(properties!.size, {
      'x-kubernetes-int-or-string': true,
      pattern: QUANTITY_PATTERN,
      description: 'size of the volume',
      default: '1Gi',
    });
    assert.deepEqual(properties!.limits!.additionalProperties, {
      'x-kubernetes-int-or-string': true,
      pattern: QUANTITY_PATTERN,
    });
  });

  it('refuses a default that is not a quantity, and a pattern of its own', () => {
    class BadDefault {
      @Field({ quantity: true, default: '1GB' }) size?: Quantity;
    }
    class OwnPattern {
      @Field({ quantity: true, pattern: '^[0-9]+$' }) size!: Quantity;
    }
    assert.throws(() => schemaOf(BadDefault), SchemaError);
    assert.throws(() => schemaOf(BadDefault), /BadDefault\.size: the default "1GB" is not a quantity/);
    assert.throws(() => schemaOf(OwnPattern), /OwnPattern\.size: a quantity has its own pattern/);
  });
});
