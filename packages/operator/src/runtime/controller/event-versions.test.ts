import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '@nestor/core';
import {
  FakeWatchTransport,
  flush,
  object,
  type FakeStream,
  ConfigMaps,
} from '../../test-support/fake-watch-transport.js';
import { Informer } from '../cache/informer.js';
import { EventVersions, type CatchUp } from './event-versions.js';

/** A synced informer at resourceVersion 10 and its watch stream. */
async function informerAt10(namespace?: string): Promise<{ informer: Informer; stream: FakeStream }> {
  const transport = new FakeWatchTransport();
  transport.onList = () => ({ items: [], metadata: { resourceVersion: '10' } });
  const informer = new Informer(transport, ConfigMaps, namespace ? { namespace } : {});
  informer.start();
  await informer.whenSynced();
  return { informer, stream: await transport.watchNumber(0) };
}

/** Every namespace's informer and the namespace ns's: the two that may serve a read of ns. */
async function twoInformers(timeoutMs = 1000) {
  const all = await informerAt10();
  const inNs = await informerAt10('ns');
  const clock = new ManualClock();
  const versions = new EventVersions({
    readers: (_kind, namespace) => [all.informer, ...(namespace === 'ns' ? [inNs.informer] : [])],
    timeoutMs,
    clock,
  });
  const stop = () => [all.informer, inNs.informer].forEach((informer) => informer.stop());
  return { all, inNs, clock, versions, stop };
}

const cm = (rv: string, namespace = 'ns') => object('settings', rv, { namespace });

/** The outcome once settled, or 'pending'. */
async function state(waiting: Promise<CatchUp> | undefined): Promise<CatchUp | 'pending' | undefined> {
  if (!waiting) return undefined;
  let settled: CatchUp | 'pending' = 'pending';
  void waiting.then((result) => (settled = result));
  await flush();
  return settled;
}

describe('EventVersions', () => {
  it('runs at once when every reader has the event; waits for one behind until it has it', async () => {
    const { all, inNs, versions, stop } = await twoInformers();
    const never = new AbortController().signal;
    assert.equal(versions.catchUp('ns/app', never), undefined, 'nothing queued the key');

    versions.note('ns/app', inNs.informer, cm('11'));
    const waiting = versions.catchUp('ns/app', never);
    assert.equal(await state(waiting), 'pending', 'every namespace’s informer is at 10');
    assert.equal(versions.size, 0, 'the run took what queued it');
    all.stream.push('MODIFIED', cm('11'));
    assert.deepEqual(await state(waiting), { outcome: 'reached' });

    versions.note('ns/app', all.informer, cm('9'));
    assert.equal(versions.catchUp('ns/app', never), undefined, 'both are past 9');
    inNs.stream.push('MODIFIED', cm('12'));
    await flush();
    versions.note('ns/app', inNs.informer, cm('12'));
    assert.equal(await state(versions.catchUp('ns/app', never)), 'pending', 'its own informer is not waited for');
    stop();
  });

  it('keeps the newest event of each informer and namespace, and waits for each origin', async () => {
    const { all, inNs, versions, stop } = await twoInformers();
    const never = new AbortController().signal;
    versions.note('ns/app', inNs.informer, cm('14'));
    versions.note('ns/app', inNs.informer, cm('12')); // a replayed object, older
    versions.note('ns/app', all.informer, cm('15')); // every namespace's informer, ahead of ns's
    versions.note('ns/app', all.informer, cm('16', 'other')); // no other reader of other
    const waiting = versions.catchUp('ns/app', never);
    all.stream.push('MODIFIED', cm('13'));
    assert.equal(await state(waiting), 'pending', '13 is not 14');
    all.stream.push('MODIFIED', cm('16', 'other'));
    assert.equal(await state(waiting), 'pending', 'ns’s informer is not at 15');
    inNs.stream.push('BOOKMARK', { metadata: { resourceVersion: '15' } });
    assert.deepEqual(await state(waiting), { outcome: 'reached' });
    stop();
  });

  it('waits for the version of the object the run is given, newer than the event that queued it', async () => {
    const { all, inNs, versions, stop } = await twoInformers();
    const never = new AbortController().signal;
    versions.note('ns/app', inNs.informer, cm('11'));
    // The namespace's informer has moved on (an event while the key waited in the queue): the
    // run is given 12, and every namespace's informer must serve 12, not 11.
    const waiting = versions.catchUp('ns/app', never, cm('12'), inNs.informer);
    all.stream.push('MODIFIED', cm('11'));
    assert.equal(await state(waiting), 'pending', 'at 11, behind the object the run is given');
    all.stream.push('MODIFIED', cm('12'));
    assert.deepEqual(await state(waiting), { outcome: 'reached' });
    assert.equal(
      versions.catchUp('ns/app', never, cm('12'), inNs.informer),
      undefined,
      'no event, and every reader has the object: at once',
    );
    versions.note('ns/app', inNs.informer, cm('13'));
    assert.equal(versions.catchUp('ns/app', never, null), undefined, 'deleted: no run, nothing to wait for');
    assert.equal(versions.size, 0, 'and nothing kept for it');
    stop();
  });

  it("waits for another cache's readers when the event came from there (a member cluster's)", async () => {
    const { all, inNs, versions, stop } = await twoInformers();
    const never = new AbortController().signal;
    const member = await informerAt10();
    const memberReader = await informerAt10('ns');
    const memberReaders = () => [member.informer, memberReader.informer];
    versions.note('ns/app', member.informer, cm('11'), memberReaders);
    const waiting = versions.catchUp('ns/app', never);
    assert.equal(await state(waiting), 'pending', "the member's other informer is at 10");
    all.stream.push('MODIFIED', cm('11'));
    inNs.stream.push('MODIFIED', cm('11'));
    assert.equal(await state(waiting), 'pending', "the controller's own caches say nothing of the member's");
    memberReader.stream.push('MODIFIED', cm('11'));
    assert.deepEqual(await state(waiting), { outcome: 'reached' });
    stop();
    member.informer.stop();
    memberReader.informer.stop();
  });

  it('gives up after its bound, says which cache is behind, and keeps the event for the next run', async () => {
    const { all, inNs, clock, versions, stop } = await twoInformers(1000);
    versions.note('ns/app', inNs.informer, cm('11'));
    const waiting = versions.catchUp('ns/app', new AbortController().signal);
    clock.advance(999);
    assert.equal(await state(waiting), 'pending');
    clock.advance(1);
    const result = await state(waiting);
    assert.equal(result !== undefined && result !== 'pending' && result.outcome, 'timeout');
    assert.match(
      (result as { behind: string }).behind,
      /the cache of configmaps in ns stands at resourceVersion 10, behind 11 of the event that queued it, after 1000 ms/,
    );
    assert.equal(versions.size, 1, 'kept for the retry');
    all.stream.push('MODIFIED', cm('11'));
    await flush();
    assert.equal(versions.catchUp('ns/app', new AbortController().signal), undefined, 'caught up since');
    stop();
  });

  it('stops waiting when aborted (a stand-by, a stop), keeping the event', async () => {
    const { inNs, versions, stop } = await twoInformers();
    versions.note('ns/app', inNs.informer, cm('11'));
    const abort = new AbortController();
    const waiting = versions.catchUp('ns/app', abort.signal);
    abort.abort(new Error('lease lost'));
    assert.deepEqual(await state(waiting), { outcome: 'aborted' });
    assert.equal(versions.size, 1);
    versions.clear();
    assert.equal(versions.size, 0);
    stop();
  });

  it('runs when a reader behind is stopped meanwhile: it serves no read any more', async () => {
    const { all, inNs, versions, stop } = await twoInformers();
    versions.note('ns/app', inNs.informer, cm('11'));
    const waiting = versions.catchUp('ns/app', new AbortController().signal);
    all.informer.stop();
    assert.deepEqual(await state(waiting), { outcome: 'reached' });
    stop();
  });
});
