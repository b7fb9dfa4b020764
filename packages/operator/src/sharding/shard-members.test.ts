import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Lease } from '../client/kinds.js';
import { KubeApiError, ManualClock, type Transport } from '@nestor/core';
import { FakeWatchTransport, flush } from '../test-support/fake-watch-transport.js';
import { InformerCache } from '../runtime/cache/informer-cache.js';
import { ShardMembers, TAKEOVER_DURATION_SECONDS, TAKEOVER_IDENTITY } from './shard-members.js';

const T0 = Date.parse('2030-01-01T00:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '000Z');

function lease(name: string, holder: string, renewedAt: number, rv: string, seconds = 10): V1Lease {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace: 'ops', resourceVersion: rv, labels: { 'shard.nestor.dev/ring': 'web' } },
    spec: { holderIdentity: holder, renewTime: iso(renewedAt), leaseDurationSeconds: seconds },
  };
}

/** The transport of takeovers: records each PUT and answers with `answer`. */
function writer(answer: (body: V1Lease) => unknown = (body) => body) {
  const puts: Array<{ path: string; body: V1Lease }> = [];
  const transport = {
    json: async (_method: string, path: string, options: { body: V1Lease }) => {
      puts.push({ path, body: options.body });
      const result = answer(options.body);
      if (result instanceof Error) throw result;
      return result;
    },
  } as unknown as Transport;
  return { transport, puts };
}

async function setUp(leases: V1Lease[], takeOver?: { transport: Transport }) {
  const watch = new FakeWatchTransport();
  watch.onList = (query) => {
    assert.equal(query.labelSelector, 'shard.nestor.dev/ring=web');
    return { items: leases, metadata: { resourceVersion: '10' } };
  };
  const clock = new ManualClock(T0);
  const members = new ShardMembers(new InformerCache(watch), {
    ring: 'web',
    namespace: 'ops',
    clock,
    ...(takeOver ? { takeOver } : {}),
  });
  const seen: string[] = [];
  members.available$.subscribe((shards) => seen.push(shards.join(',')));
  members.start();
  await members.whenSynced();
  return { members, clock, stream: await watch.watchNumber(0), seen };
}

describe('ShardMembers', () => {
  it('computes the available shards from the Leases and emits each change once', async () => {
    const { members, stream, seen } = await setUp([
      lease('s-1', 's-1', T0, '1'),
      lease('s-0', 's-0', T0, '2'),
      lease('s-2', '', T0, '3'),
    ]);
    assert.deepEqual(members.available(), ['s-0', 's-1']);
    assert.equal(members.states().get('s-2'), 'dead');
    stream.push('ADDED', lease('s-3', 's-3', T0, '11'));
    stream.push('MODIFIED', lease('s-0', 's-0', T0 + 1, '12')); // a renewal: no change
    await flush();
    stream.push('MODIFIED', lease('s-1', '', T0 + 2, '13')); // released
    await flush();
    assert.deepEqual(seen, ['s-0,s-1', 's-0,s-1,s-3', 's-0,s-3']);
    members.stop();
  });

  it('keeps a shard that stopped renewing available through expired and uncertain, on its clock', async () => {
    const { members, clock, stream, seen } = await setUp([lease('s-0', 's-0', T0, '1'), lease('s-1', 's-1', T0, '2')]);
    clock.advance(5_000);
    stream.push('MODIFIED', lease('s-1', 's-1', T0 + 5_000, '3')); // s-1 renews once more, then both stop
    await flush();
    clock.advance(5_000);
    assert.equal(members.states().get('s-0'), 'expired');
    assert.equal(members.states().get('s-1'), 'ready');
    clock.advance(10_000);
    assert.equal(members.states().get('s-0'), 'uncertain');
    assert.equal(members.states().get('s-1'), 'expired');
    clock.advance(60_000);
    assert.equal(members.states().get('s-1'), 'uncertain');
    assert.deepEqual(seen, ['s-0,s-1'], 'no takeover here: uncertain shards stay');
    assert.equal(clock.pendingTimers, 0, 'no timer once nothing can change');
    members.stop();
  });

  it('takes the Lease of an uncertain shard, guarded by its resourceVersion, which makes it dead', async () => {
    const { transport, puts } = writer();
    const { members, clock, stream, seen } = await setUp([lease('s-0', 's-0', T0, '1'), lease('s-1', 's-1', T0, '2')], {
      transport,
    });
    clock.advance(15_000);
    stream.push('MODIFIED', lease('s-1', 's-1', T0 + 15_000, '3')); // s-1 renews; s-0 does not
    await flush();
    clock.advance(5_000);
    await flush();
    assert.equal(puts.length, 1);
    assert.match(puts[0]!.path, /\/namespaces\/ops\/leases\/s-0$/);
    assert.equal(puts[0]!.body.metadata?.resourceVersion, '1');
    assert.equal(puts[0]!.body.spec?.holderIdentity, TAKEOVER_IDENTITY);
    assert.equal(puts[0]!.body.spec?.leaseDurationSeconds, TAKEOVER_DURATION_SECONDS, 'held until released');
    assert.deepEqual(members.available(), ['s-0', 's-1'], 'dead only once the write is seen');
    stream.push('MODIFIED', { ...puts[0]!.body, metadata: { ...puts[0]!.body.metadata, resourceVersion: '4' } });
    await flush();
    assert.deepEqual(members.available(), ['s-1']);
    assert.deepEqual(seen, ['s-0,s-1', 's-1']);

    // Once the objects are moved the assigner releases what it took, at the version it saw.
    const taken = members.taken();
    assert.deepEqual([...taken], [['s-0', '4']]);
    await members.release(new Map([['s-0', '3']]));
    assert.equal(puts.length, 1, 'a Lease that changed since is not released');
    await members.release(taken);
    assert.equal(puts.length, 2);
    assert.equal(puts[1]!.body.metadata?.resourceVersion, '4');
    assert.equal(puts[1]!.body.spec?.holderIdentity, '', 'free: its shard may take it back');
    stream.push('MODIFIED', { ...puts[1]!.body, metadata: { ...puts[1]!.body.metadata, resourceVersion: '5' } });
    await flush();
    assert.equal(members.states().get('s-0'), 'dead', 'still out of the ring until it does');
    assert.deepEqual(members.taken(), new Map());
    members.stop();
  });

  it('leaves a shard that renewed meanwhile (409) and retries a failed takeover later', async () => {
    let answer: (body: V1Lease) => unknown = () =>
      KubeApiError.fromResponse({ method: 'PUT', path: '/x' }, 409, { kind: 'Status', code: 409, reason: 'Conflict' });
    const { transport, puts } = writer((body) => answer(body));
    const { members, clock } = await setUp([lease('s-0', 's-0', T0, '1')], { transport });
    clock.advance(20_000);
    await flush();
    assert.equal(puts.length, 1);
    assert.deepEqual(members.available(), ['s-0']);

    answer = () => new Error('connection refused');
    clock.advance(1); // nothing re-evaluates an uncertain Lease by itself: push an event
    members['evaluate']();
    await flush();
    assert.equal(puts.length, 2);
    answer = (body) => body;
    clock.advance(2_000);
    await flush();
    assert.equal(puts.length, 3, 'retried after retryMs');
    members.stop();
  });

  it('measures expiry from when it saw each renewal, so a shard whose clock runs behind stays ready', async () => {
    // The shard's clock is a minute behind: every renewTime it writes looks a minute old here.
    const behind = 60_000;
    const { members, clock, stream } = await setUp([lease('s-0', 's-0', T0 - behind, '1')]);
    assert.equal(members.states().get('s-0'), 'ready', 'seen renewed now');
    for (let rv = 2; rv < 6; rv++) {
      clock.advance(5_000);
      stream.push('MODIFIED', lease('s-0', 's-0', clock.now() - behind, String(rv)));
      await flush();
      assert.equal(members.states().get('s-0'), 'ready', 'renewing on a slow clock');
    }
    // It stops renewing: expired a duration after the last renewal seen, uncertain after two.
    clock.advance(10_000);
    assert.equal(members.states().get('s-0'), 'expired');
    clock.advance(10_000);
    assert.equal(members.states().get('s-0'), 'uncertain');
    members.stop();
  });

  it('never takes its own Lease, and takes nothing once it may no longer lead', async () => {
    const { transport, puts } = writer();
    const watch = new FakeWatchTransport();
    watch.onList = () => ({
      items: [lease('me', 'me', T0, '1'), lease('other', 'other', T0, '2')],
      metadata: { resourceVersion: '10' },
    });
    const clock = new ManualClock(T0);
    const members = new ShardMembers(new InformerCache(watch), {
      ring: 'web',
      namespace: 'ops',
      clock,
      self: 'me',
      takeOver: { transport },
    });
    let leading = false;
    members.assertLeading = () => {
      if (!leading) throw new Error('not leading');
    };
    members.start();
    await members.whenSynced();
    clock.advance(20_000); // both uncertain, as a leader thawed after a pause sees them
    await flush();
    assert.equal(puts.length, 0, 'not leading: no takeover');
    leading = true;
    members['evaluate']();
    await flush();
    assert.deepEqual(
      puts.map((p) => p.path.split('/').pop()),
      ['other'],
      'its own Lease is never taken',
    );
    members.stop();
  });

  it('a change of a Lease that is not a renewal (a label edit) does not keep a dead shard alive', async () => {
    const { members, clock, stream } = await setUp([lease('s-0', 's-0', T0, '1')]);
    for (let rv = 2; rv < 6; rv++) {
      clock.advance(5_000);
      const edited = lease('s-0', 's-0', T0, String(rv));
      edited.metadata!.annotations = { touched: String(rv) };
      stream.push('MODIFIED', edited);
      await flush();
    }
    assert.equal(members.states().get('s-0'), 'uncertain', '20 s without a renewal');
    members.stop();
  });

  it('deletes a Lease released long ago, guarded by its resourceVersion, and never one still taken', async () => {
    const { transport, puts } = writer();
    const { members, clock } = await setUp([lease('gone', '', T0, '1'), lease('taken', TAKEOVER_IDENTITY, T0, '2')], {
      transport,
    });
    clock.advance(299_000);
    await flush();
    assert.equal(puts.length, 0);
    clock.advance(1_000);
    await flush();
    assert.deepEqual(
      puts.map((p) => [p.path.split('/').pop(), (p.body as unknown as { preconditions: unknown }).preconditions]),
      [['gone', { resourceVersion: '1' }]],
    );
    members.stop();
  });

  it('refuses an invalid ring name', () => {
    assert.throws(
      () => new ShardMembers(new InformerCache(new FakeWatchTransport()), { ring: 'a/b', namespace: 'ops' }),
      /invalid ring name "a\/b"/,
    );
  });
});
