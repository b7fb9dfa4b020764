import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { object } from '../../test-support/fake-watch-transport.js';
import { KnownObjects } from './known-objects.js';
import type { KubeObject } from '@nestor/core';

describe('KnownObjects relist', () => {
  it('on a first list, everything is ADDED and nothing vanishes', () => {
    const known = new KnownObjects<KubeObject>();
    const pass = known.relist();
    assert.equal(pass.observe('ns/a', object('a', '1')), 'ADDED');
    assert.equal(pass.observe('ns/b', object('b', '1')), 'ADDED');
    assert.deepEqual([...pass.vanished()], []);
    assert.equal(known.size, 2);
  });

  it('tells ADDED from MODIFIED from unchanged by resourceVersion, and yields the last known state of vanished keys', () => {
    const known = new KnownObjects<KubeObject>();
    const [a, b, c] = [object('a', '1'), object('b', '1'), object('c', '1')];
    known.set('ns/a', a);
    known.set('ns/b', b);
    known.set('ns/c', c);
    const pass = known.relist();
    const a2 = object('a', '1');
    const b2 = object('b', '7');
    assert.equal(pass.observe('ns/a', a2), undefined);
    assert.equal(pass.observe('ns/b', b2), 'MODIFIED');
    assert.equal(pass.observe('ns/d', object('d', '8')), 'ADDED');
    assert.deepEqual([...pass.vanished()], [['ns/c', c]]);
    assert.equal(known.get('ns/a'), a, 'an unchanged object keeps its first reference');
    assert.equal(known.get('ns/b'), b2);
    assert.equal(known.get('ns/c'), undefined);
    assert.equal(known.size, 3);
  });
});
