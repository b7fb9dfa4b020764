import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JsonListDecoder } from './json-list-stream.js';
import { cutAt } from './test-support/cut-at.js';

/** Feeds `bytes` cut at the given offsets; returns the items and the list without them. */
function decodeCut(bytes: Buffer, cuts: number[]) {
  const decoder = new JsonListDecoder();
  const items = cutAt(bytes, cuts).flatMap((chunk) => decoder.write(chunk));
  return { items, list: decoder.end() };
}

const awkward = [
  {
    metadata: { name: 'a', resourceVersion: '1', annotations: { 'x/y': 'say "}]{[" \\ and \\"' } },
    spec: { items: [{ items: 1 }], nested: [[], [{}], { '': null }], n: -1.5e3, ok: true },
  },
  { metadata: { name: 'ünïcødé-✓-🙂', labels: { k: '\\' } }, data: { '\\"': '\\\\"', empty: '' } },
  { metadata: { name: 'c' }, items: 'items', list: ['items', { items: [] }] },
];

describe('JsonListDecoder', () => {
  it('decodes the same items and list whatever byte a chunk boundary falls on', () => {
    const list = { apiVersion: 'v1', items: awkward, kind: 'ConfigMapList', metadata: { resourceVersion: '42' } };
    const wire = Buffer.from(JSON.stringify(list));
    const rest = { ...list, items: [] };
    for (let cut = 0; cut <= wire.length; cut++) {
      assert.deepEqual(decodeCut(wire, [cut]), { items: awkward, list: rest }, `cut at byte ${cut}`);
    }
    // Two cuts a few bytes apart: a backslash run, a quote or a key split three ways.
    for (let cut = 0; cut + 3 <= wire.length; cut++) {
      assert.deepEqual(decodeCut(wire, [cut, cut + 3]).items, awkward, `cuts at ${cut} and ${cut + 3}`);
    }
  });

  it('finds the items whatever the order of the keys, with whitespace, and none or null', () => {
    const spaced = `{ "kind" : "items" , "metadata" : { "continue" : "t", "items": [1] } ,\n "items" :\t[ {"a":1} , {"b":[2]} ] }`;
    assert.deepEqual(decodeCut(Buffer.from(spaced), [17]), {
      items: [{ a: 1 }, { b: [2] }],
      list: { kind: 'items', metadata: { continue: 't', items: [1] }, items: [] },
    });
    assert.deepEqual(decodeCut(Buffer.from('{"items":[],"metadata":{}}'), []), {
      items: [],
      list: { items: [], metadata: {} },
    });
    assert.deepEqual(decodeCut(Buffer.from('{"metadata":{},"items":null}'), [3]), {
      items: [],
      list: { metadata: {}, items: null },
    });
  });

  it('hands each item over as soon as its last byte is in, before the list ends', () => {
    const items = Array.from({ length: 100 }, (_, i) => ({
      metadata: { name: `cm-${i}` },
      data: { v: 'x'.repeat(i) },
    }));
    const parts = items.map((item) => JSON.stringify(item));
    const wire = Buffer.from(`{"items":[${parts.join(',')}],"metadata":{}}`);
    // Where each item's last byte is.
    let at = '{"items":['.length;
    const ends = parts.map((part) => (at += part.length + 1) - 2);
    const decoder = new JsonListDecoder();
    let handed = 0;
    for (let from = 0; from < wire.length; from += 1000) {
      handed += decoder.write(wire.subarray(from, from + 1000)).length;
      const complete = ends.filter((end) => end < from + 1000).length;
      assert.equal(handed, complete, `after byte ${from + 1000}`);
    }
    assert.equal(handed, 100);
    decoder.end();
  });

  it('still gives the items when the key is escaped so that the scan does not know it', () => {
    const wire = Buffer.from('{"\\u0069tems":[{"a":1}],"metadata":{"resourceVersion":"7"}}');
    const { items, list } = decodeCut(wire, [4]);
    assert.deepEqual(items, []);
    assert.deepEqual(list, { items: [{ a: 1 }], metadata: { resourceVersion: '7' } });
  });

  it('says when the body ended before the list did, and what is wrong with a malformed item', () => {
    const decoder = new JsonListDecoder();
    decoder.write(Buffer.from('{"items":[{"a":1},{"b":'));
    assert.throws(() => decoder.end(), /the LIST body ended before the list did/);
    assert.throws(() => new JsonListDecoder().write(Buffer.from('{"items":[{"a":tru}]}')), SyntaxError);
    assert.throws(() => new JsonListDecoder().write(Buffer.from('{"items":[]}}]')), /closes more than it opened/);
  });
});
