import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkKeep, decideKeep, watchedKind, type RelatedKind } from './keep-choice.js';

const selectorOf = (kind: RelatedKind) => decideKeep(kind).selector;

describe('decideKeep', () => {
  it('watches an owned kind for events only, cached from its first read, as kube-rs keeps nothing of it', () => {
    assert.deepEqual(selectorOf({ role: 'owns' }), { eventsOnly: true, cacheOnRead: true });
    assert.match(decideKeep({ role: 'owns' }).why, /watched for events only until a read from the cache/);
  });

  it('never makes a kind whose informer serves no read start caching on a read: metadata only, a selector', () => {
    assert.deepEqual(selectorOf({ role: 'owns', metadataOnly: true }), { metadataOnly: true, eventsOnly: true });
    // A shard's owned informers select its share of the children: caching on read would cache every shard's.
    assert.deepEqual(selectorOf({ role: 'owns', selected: true }), { eventsOnly: true });
    assert.match(decideKeep({ role: 'owns', selected: true }).why, /a selector: no read is served from it/);
  });

  it('keeps what a watch with predicates watches: they compare an update’s old object with the new one', () => {
    assert.deepEqual(selectorOf({ role: 'watches', predicates: true }), {});
    assert.deepEqual(selectorOf({ role: 'watches', predicates: true, metadataOnly: true }), { metadataOnly: true });
    assert.deepEqual(selectorOf({ role: 'watches' }), { eventsOnly: true, cacheOnRead: true });
    // Predicates say nothing of an owned kind: its events only requeue the owner.
    assert.deepEqual(selectorOf({ role: 'owns', predicates: true }), { eventsOnly: true, cacheOnRead: true });
  });

  it('follows the entry’s keep, then the kind’s, over the rules', () => {
    assert.deepEqual(selectorOf({ role: 'owns', keep: 'objects' }), {});
    assert.deepEqual(selectorOf({ role: 'owns', kindKeep: 'objects' }), {});
    assert.deepEqual(selectorOf({ role: 'owns', keep: 'metadata' }), { metadataOnly: true });
    assert.deepEqual(selectorOf({ role: 'owns', keep: 'none' }), { eventsOnly: true });
    assert.deepEqual(selectorOf({ role: 'owns', keep: 'none', metadataOnly: true }), {
      metadataOnly: true,
      eventsOnly: true,
    });
    assert.deepEqual(selectorOf({ role: 'watches', predicates: true, keep: 'none' }), { eventsOnly: true });
    assert.deepEqual(selectorOf({ role: 'owns', keep: 'none', kindKeep: 'objects' }), { eventsOnly: true });
    assert.deepEqual(selectorOf({ role: 'owns', keep: 'objects', kindKeep: 'none' }), {});
    assert.match(decideKeep({ role: 'owns', kindKeep: 'none' }).why, /asked by the cache's settings.*API server/);
    assert.match(decideKeep({ role: 'owns', keep: 'objects' }).why, /objects cached \(asked by the controller\)/);
  });

  it('refuses whole objects of a watch of metadata only, unless the kind’s setting asked: that one gives way', () => {
    assert.throws(
      () => decideKeep({ role: 'owns', keep: 'objects', metadataOnly: true }),
      /keep: 'objects' asks for whole objects but metadataOnly watches their metadata only/,
    );
    assert.deepEqual(selectorOf({ role: 'owns', kindKeep: 'objects', metadataOnly: true }), { metadataOnly: true });
  });

  it('reads a watch’s options', () => {
    const map = () => undefined;
    assert.deepEqual(watchedKind({ predicates: [], labelSelector: 'a=b' }), {
      role: 'watches',
      keep: undefined,
      metadataOnly: undefined,
      predicates: false,
      selected: true,
    });
    assert.equal(watchedKind({ predicates: [map] }).predicates, true);
  });
});

describe('checkKeep', () => {
  it('passes a choice or nothing, and names where a bad value is', () => {
    assert.equal(checkKeep(undefined, 'x'), undefined);
    assert.equal(checkKeep('none', 'x'), 'none');
    assert.throws(
      () => checkKeep('cached', 'owns[0].keep'),
      /owns\[0\]\.keep must be 'objects', 'metadata' or 'none' \(or left out: cached from its first read\), got "cached"/,
    );
  });
});
