import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StoreIndex } from './store-index.js';

interface Item {
  tags: string[];
}

describe('StoreIndex', () => {
  it('moves a key between values as its object changes and drops empty values', () => {
    let calls = 0;
    const index = new StoreIndex<Item>((item) => {
      calls++;
      return item.tags;
    });
    index.update('k1', undefined, { tags: ['a', 'b'] });
    index.update('k2', undefined, { tags: ['b'] });
    assert.deepEqual([...index.keys('b')], ['k1', 'k2']);
    index.update('k1', { tags: ['a', 'b'] }, { tags: ['b', 'c'] });
    assert.deepEqual([...index.keys('a')], []);
    assert.deepEqual([...index.keys('c')], ['k1']);
    assert.deepEqual([...index.values()].sort(), ['b', 'c']);
    index.update('k2', { tags: ['b'] }, undefined);
    index.update('k1', { tags: ['b', 'c'] }, undefined);
    assert.deepEqual([...index.values()], []);
    assert.equal(calls, 6, 'the function runs once per side of each change');
  });

  it('does nothing when the values did not change', () => {
    const index = new StoreIndex<Item>((item) => item.tags);
    index.update('k', undefined, { tags: ['x'] });
    index.update('k', { tags: ['x'] }, { tags: ['x'] });
    assert.deepEqual([...index.keys('x')], ['k']);
  });
});
