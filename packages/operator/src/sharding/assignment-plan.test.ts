import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { planAssignments, type AssignmentAction, type AssignmentInput } from './assignment-plan.js';
import { HashRing } from './hash-ring.js';

interface Obj extends AssignmentInput {
  name: string;
  shard?: string;
  drain?: string;
  controlled?: boolean;
}

const ring3 = new HashRing(['s-0', 's-1', 's-2']);
const objects = (n: number): Obj[] => Array.from({ length: n }, (_, i) => ({ name: `o-${i}`, key: `g/K/ns/o-${i}` }));

/** A key that ring3 puts on `shard`. */
function keyOn(shard: string): string {
  for (let i = 0; ; i++) if (ring3.shardFor(`k-${i}`) === shard) return `k-${i}`;
}

/** What the writes do: assign sets the label and clears the drain; drain sets the drain label. */
function apply(actions: AssignmentAction<Obj>[]): void {
  for (const { type, object, shard } of actions) {
    if (type === 'assign') {
      object.shard = shard;
      delete object.drain;
    } else object.drain = shard;
  }
}

/** The old shard's acknowledgement of a drain: both labels removed. */
function acknowledgeDrains(all: Obj[]): void {
  for (const object of all) {
    if (object.drain !== undefined) {
      delete object.shard;
      delete object.drain;
    }
  }
}

describe('planAssignments', () => {
  it('assigns unlabelled objects to their ring shard', () => {
    const all = objects(50);
    const { actions, deferred } = planAssignments(all, ring3);
    assert.equal(actions.length, 50);
    assert.equal(deferred, 0);
    for (const action of actions) {
      assert.equal(action.type, 'assign');
      assert.equal(action.shard, ring3.shardFor(action.object.key));
    }
  });

  it('leaves objects on their ring shard alone', () => {
    const all = objects(20).map((o) => ({ ...o, shard: ring3.shardFor(o.key) }));
    assert.deepEqual(planAssignments(all, ring3).actions, []);
  });

  it('moves objects of a dead or unknown shard directly, clearing any drain', () => {
    const key = keyOn('s-1');
    const { actions } = planAssignments(
      [
        { name: 'dead', key, shard: 's-9' },
        { name: 'dead-draining', key, shard: 's-9', drain: 's-0' },
        { name: 'empty-label', key, shard: '' },
      ],
      ring3,
    );
    assert.deepEqual(
      actions.map((a) => [a.object.name, a.type, a.shard]),
      [
        ['dead', 'assign', 's-1'],
        ['dead-draining', 'assign', 's-1'],
        ['empty-label', 'assign', 's-1'],
      ],
    );
  });

  it('drains an object from an available shard the ring no longer names', () => {
    const { actions } = planAssignments([{ name: 'o', key: keyOn('s-2'), shard: 's-0' }], ring3);
    assert.deepEqual(
      actions.map((a) => [a.type, a.shard]),
      [['drain', 's-2']],
    );
  });

  it('waits for the acknowledgement of a drain under way to an available shard', () => {
    const key = keyOn('s-2');
    const { actions } = planAssignments(
      [
        { name: 'a', key, shard: 's-0', drain: 's-2' },
        { name: 'c', key, shard: 's-2', drain: 's-1' },
      ],
      ring3,
    );
    assert.deepEqual(actions, []);
  });

  it('asks again when the drain’s target is no longer available, for the shard the ring names now', () => {
    const key = keyOn('s-2');
    const all: Obj[] = [
      { name: 'target-died', key, shard: 's-0', drain: 's-9' },
      { name: 'no-target', key, shard: 's-1', drain: 'true' },
    ];
    const { actions } = planAssignments(all, ring3);
    assert.deepEqual(
      actions.map((a) => [a.object.name, a.type, a.shard]),
      [
        ['target-died', 'drain', 's-2'],
        ['no-target', 'drain', 's-2'],
      ],
    );
    apply(actions);
    assert.deepEqual(planAssignments(all, ring3).actions, [], 'then it waits for the acknowledgement');
  });

  it('counts drains under way to a live shard the ring no longer names, which need another pass once acknowledged', () => {
    const all: Obj[] = [
      { name: 'outdated', key: keyOn('s-2'), shard: 's-0', drain: 's-1' },
      { name: 'on-its-way', key: keyOn('s-2'), shard: 's-0', drain: 's-2' },
    ];
    const plan = planAssignments(all, ring3);
    assert.deepEqual(plan.actions, [], 'neither is asked again while its old shard may be handing it over');
    assert.equal(plan.waiting, 1);
  });

  it('never drains a controlled object: on a live shard it waits for its owner, else it is assigned', () => {
    const all: Obj[] = [
      { name: 'with-owner', key: keyOn('s-2'), shard: 's-0', controlled: true },
      { name: 'new', key: keyOn('s-2'), controlled: true },
      { name: 'dead', key: keyOn('s-1'), shard: 's-9', controlled: true },
    ];
    const { actions } = planAssignments(all, ring3);
    assert.deepEqual(
      actions.map((a) => [a.object.name, a.type, a.shard]),
      [
        ['new', 'assign', 's-2'],
        ['dead', 'assign', 's-1'],
      ],
    );
  });

  it('plans nothing on an empty ring', () => {
    const all = [...objects(3), { name: 'x', key: 'k', shard: 's-0' }];
    assert.deepEqual(planAssignments(all, new HashRing([])), { actions: [], deferred: 0, waiting: 0 });
  });

  it('caps the actions of one pass, assignments first, and counts the rest', () => {
    const drainable = objects(300)
      .map((o) => ({ ...o, shard: 's-0' }))
      .filter((o) => ring3.shardFor(o.key) !== 's-0');
    const unassigned = objects(30).map((o) => ({ ...o, name: `new-${o.name}` }));
    const plan = planAssignments([...drainable, ...unassigned], ring3, { maxMoves: 40 });
    assert.equal(plan.actions.length, 40);
    assert.deepEqual(
      plan.actions.slice(0, 30).map((a) => a.type),
      Array(30).fill('assign'),
    );
    assert.equal(plan.actions[30]!.type, 'drain');
    assert.equal(plan.deferred, drainable.length + 30 - 40);
    assert.equal(planAssignments(objects(250), ring3).actions.length, 100, 'default cap 100');
    assert.throws(() => planAssignments([], ring3, { maxMoves: 0 }), /maxMoves must be a positive integer/);
  });

  it('is stable: applying the plans and the acknowledgements leads to no action', () => {
    const all = objects(500);
    apply(planAssignments(all, ring3, { maxMoves: 1000 }).actions);
    assert.deepEqual(planAssignments(all, ring3).actions, []);

    // A fourth shard joins: paced drains, acknowledged, then assigned, until nothing is left.
    const ring4 = new HashRing(['s-0', 's-1', 's-2', 's-3']);
    let passes = 0;
    for (;;) {
      const { actions } = planAssignments(all, ring4, { maxMoves: 50 });
      if (actions.length === 0) break;
      assert.ok(
        actions.every((a) => a.shard === 's-3'),
        'only moves to the new shard',
      );
      apply(actions);
      acknowledgeDrains(all);
      assert.ok(++passes < 20, 'converges');
    }
    for (const object of all) assert.equal(object.shard, ring4.shardFor(object.key));

    // One shard dies: its objects are assigned directly, in one pass with room for them.
    const ring3b = new HashRing(['s-0', 's-2', 's-3']);
    const plan = planAssignments(all, ring3b, { maxMoves: 1000 });
    assert.ok(plan.actions.every((a) => a.type === 'assign' && a.object.shard === 's-1'));
    apply(plan.actions);
    assert.deepEqual(planAssignments(all, ring3b).actions, []);
  });

  it('keeps every child on its owner’s shard through any sequence of rings, with hand-overs carrying the children', () => {
    const SHARDS = ['s-0', 's-1', 's-2', 's-3', 's-4'];
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 30 }),
        fc.array(fc.subarray(SHARDS, { minLength: 1 }), { minLength: 1, maxLength: 6 }),
        (childCounts, rings) => {
          const owners: Obj[] = childCounts.map((_, i) => ({ name: `o-${i}`, key: `g/K/ns/o-${i}` }));
          const children = new Map<Obj, Obj[]>(
            owners.map((owner, i) => [
              owner,
              Array.from({ length: childCounts[i]! }, (_, c) => ({
                name: `o-${i}-${c}`,
                key: owner.key,
                controlled: true,
              })),
            ]),
          );
          const all = [...owners, ...[...children.values()].flat()];
          // No child is ever on another shard than its owner, before or after a hand-over.
          const withOwners = () => {
            for (const [owner, owned] of children) {
              for (const child of owned) assert.equal(child.shard, owner.shard, `${child.name} with its owner`);
            }
          };
          for (const shards of rings) {
            const ring = new HashRing(shards);
            for (let round = 0; ; round++) {
              assert.ok(round < 10, 'settles');
              const { actions } = planAssignments(all, ring, { maxMoves: all.length });
              apply(actions);
              withOwners();
              // The old shard's hand-over: the children first, then the owner, to the target.
              const drained = owners.filter((owner) => owner.drain !== undefined);
              for (const owner of drained) {
                for (const child of children.get(owner)!) child.shard = owner.drain;
                owner.shard = owner.drain;
                delete owner.drain;
              }
              withOwners();
              if (actions.length === 0 && drained.length === 0) break;
            }
            for (const object of all) assert.equal(object.shard, ring.shardFor(object.key));
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});
