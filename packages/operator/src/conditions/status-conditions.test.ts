import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '@nestor/core';
import { Condition, ConditionsField } from './condition.js';
import { CustomResource } from '../crd/custom-resource.decorator.js';
import { customResourceDefinition } from '../crd/crd-generator.js';
import { Field } from '../crd/field.decorator.js';
import { schemaOf } from '../crd/schema.js';
import {
  findStatusCondition,
  isStatusConditionFalse,
  isStatusConditionTrue,
  removeStatusCondition,
  setStatusCondition,
  StatusConditions,
} from './status-conditions.js';

const T0 = Date.UTC(2024, 0, 1, 12, 0, 0);
const at = (clock: ManualClock) => new Date(clock.now()).toISOString().replace(/\.\d+Z$/, 'Z');

describe('setStatusCondition (meta.SetStatusCondition)', () => {
  it('adds a missing condition with lastTransitionTime now, to the second', () => {
    const clock = new ManualClock(T0 + 123);
    const next = setStatusCondition(
      undefined,
      { type: 'Ready', status: 'True', reason: 'Up', message: 'ok' },
      { clock },
    );
    assert.deepEqual(next, [
      { type: 'Ready', status: 'True', reason: 'Up', message: 'ok', lastTransitionTime: '2024-01-01T12:00:00Z' },
    ]);
  });

  it('keeps lastTransitionTime while the status stays, and returns the same list when nothing changed', () => {
    const clock = new ManualClock(T0);
    const first = setStatusCondition(
      [],
      { type: 'Ready', status: 'False', reason: 'Starting', message: '' },
      { clock },
    );
    clock.advance(60_000);
    const same = setStatusCondition(
      first,
      { type: 'Ready', status: 'False', reason: 'Starting', message: '' },
      { clock },
    );
    assert.equal(same, first, 'unchanged: the very same array (no status write needed)');

    const reworded = setStatusCondition(
      first,
      { type: 'Ready', status: 'False', reason: 'Pulling', message: 'image' },
      {
        clock,
      },
    );
    assert.notEqual(reworded, first);
    assert.equal(reworded[0]!.lastTransitionTime, '2024-01-01T12:00:00Z', 'no transition: the time stays');
    assert.deepEqual([reworded[0]!.reason, reworded[0]!.message], ['Pulling', 'image']);
    assert.equal(first[0]!.reason, 'Starting', 'the input is never modified');

    clock.advance(60_000);
    const up = setStatusCondition(reworded, { type: 'Ready', status: 'True', reason: 'Up', message: '' }, { clock });
    assert.equal(up[0]!.lastTransitionTime, at(clock), 'a transition: now');
  });

  it('uses a given lastTransitionTime on a transition only', () => {
    const start = [
      { type: 'A', status: 'True' as const, reason: 'R', message: '', lastTransitionTime: '2020-01-01T00:00:00Z' },
    ];
    const given = '2023-05-05T05:05:05Z';
    const same = setStatusCondition(start, {
      type: 'A',
      status: 'True',
      reason: 'R',
      message: '',
      lastTransitionTime: given,
    });
    assert.equal(same, start);
    const flipped = setStatusCondition(start, {
      type: 'A',
      status: 'False',
      reason: 'R',
      message: '',
      lastTransitionTime: given,
    });
    assert.equal(flipped[0]!.lastTransitionTime, given);
  });

  it('updates observedGeneration, and keeps the order of the other conditions', () => {
    const clock = new ManualClock(T0);
    let list = setStatusCondition(
      [],
      { type: 'A', status: 'True', reason: 'R', message: '', observedGeneration: 1 },
      { clock },
    );
    list = setStatusCondition(
      list,
      { type: 'B', status: 'True', reason: 'R', message: '', observedGeneration: 1 },
      { clock },
    );
    const bumped = setStatusCondition(
      list,
      { type: 'A', status: 'True', reason: 'R', message: '', observedGeneration: 2 },
      {
        clock,
      },
    );
    assert.notEqual(bumped, list);
    assert.deepEqual(
      bumped.map((c) => [c.type, c.observedGeneration]),
      [
        ['A', 2],
        ['B', 1],
      ],
    );
  });

  it('removes, finds and tests conditions as meta does', () => {
    const clock = new ManualClock(T0);
    let list = setStatusCondition([], { type: 'Ready', status: 'True', reason: 'Up', message: '' }, { clock });
    list = setStatusCondition(list, { type: 'Degraded', status: 'False', reason: 'Fine', message: '' }, { clock });
    assert.equal(isStatusConditionTrue(list, 'Ready'), true);
    assert.equal(isStatusConditionFalse(list, 'Ready'), false);
    assert.equal(isStatusConditionFalse(list, 'Degraded'), true);
    assert.equal(isStatusConditionTrue(list, 'Missing'), false);
    assert.equal(isStatusConditionFalse(list, 'Missing'), false, 'absent is neither');
    assert.equal(findStatusCondition(list, 'Degraded')?.reason, 'Fine');
    assert.equal(removeStatusCondition(list, 'Missing'), list);
    assert.deepEqual(
      removeStatusCondition(list, 'Ready').map((c) => c.type),
      ['Degraded'],
    );
  });
});

describe('StatusConditions', () => {
  it("stamps the object's generation and says whether anything changed", () => {
    const clock = new ManualClock(T0);
    const object = { metadata: { generation: 7 }, status: { conditions: [] as Condition[] } };
    const conditions = new StatusConditions(object, { clock });
    assert.equal(conditions.changed, false);
    assert.equal(conditions.set({ type: 'Ready', status: 'Unknown', reason: 'Checking', message: '' }), true);
    assert.equal(conditions.find('Ready')?.observedGeneration, 7);
    assert.equal(conditions.changed, true);
    assert.deepEqual(object.status.conditions, [], "the object's conditions are left alone");

    // The next reconcile of the same generation, with the written status: nothing to write.
    const again = new StatusConditions(
      { metadata: { generation: 7 }, status: { conditions: conditions.list } },
      { clock },
    );
    clock.advance(5_000);
    assert.equal(again.set({ type: 'Ready', status: 'Unknown', reason: 'Checking', message: '' }), false);
    assert.equal(again.changed, false);
    assert.equal(again.remove('Ready'), true);
    assert.equal(again.isTrue('Ready'), false);
  });
});

describe('Condition', () => {
  class Status {
    @ConditionsField() conditions?: Condition[];
    @Field({ type: 'integer', required: false }) observedGeneration?: number;
  }
  @CustomResource({ group: 'example.com', version: 'v1', kind: 'Thing', subresources: { status: {} } })
  class Thing {
    metadata?: object;
    @Field(() => Status, { required: false }) status?: Status;
  }

  it("has metav1.Condition's schema, a map list keyed by type", () => {
    const schema = schemaOf(Status).properties!.conditions!;
    assert.equal(schema.type, 'array');
    assert.equal(schema['x-kubernetes-list-type'], 'map');
    assert.deepEqual(schema['x-kubernetes-list-map-keys'], ['type']);
    const item = schema.items!;
    // What controller-gen writes for metav1.Condition (descriptions aside).
    assert.deepEqual(item.required, ['lastTransitionTime', 'message', 'reason', 'status', 'type']);
    const shape = Object.fromEntries(
      Object.entries(item.properties!).map(([name, { description: _description, ...rest }]) => [name, rest]),
    );
    assert.deepEqual(shape, {
      lastTransitionTime: { type: 'string', format: 'date-time' },
      message: { type: 'string', maxLength: 32768 },
      observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
      reason: { type: 'string', minLength: 1, maxLength: 1024, pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$' },
      status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
      type: {
        type: 'string',
        maxLength: 316,
        pattern:
          '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
      },
    });
    for (const property of Object.values(item.properties!)) assert.ok(property.description, 'every field is described');
  });

  it('goes into a CRD from one line', () => {
    const crd = customResourceDefinition(Thing);
    const status = crd.spec.versions[0]!.schema!.openAPIV3Schema.properties!.status!;
    assert.equal(status.properties!.conditions!['x-kubernetes-list-type'], 'map');
    assert.ok(!status.required?.includes('conditions'), 'optional');
  });
});
