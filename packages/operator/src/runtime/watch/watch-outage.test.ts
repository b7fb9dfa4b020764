import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  Connectivity,
  KubeApiError,
  type KubeObject,
  ManualClock,
  type RequestOptions,
  type ResourceDescriptor,
} from '@nestor/core';
import { FakeWatchTransport, flush, object } from '../../test-support/fake-watch-transport.js';
import { watch } from './watch.js';
import type { WatchEvent } from './watch-event.js';
import type { WatchErrorInfo } from './watch-options.js';

const Widgets: ResourceDescriptor<KubeObject> = {
  group: 'example.com',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
};

const refused = () =>
  KubeApiError.fromNetwork(
    { method: 'GET', path: '/apis/example.com/v1/widgets' },
    'https://k',
    Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
  );

/**
 * A kube-apiserver that is starting: it accepts connections and holds the first `held`
 * LISTs without answering until their signal aborts; the later ones it answers.
 */
class StartingServer extends FakeWatchTransport {
  readonly connectivity = new Connectivity();
  pending = 0;

  constructor(private held: number) {
    super();
  }

  override async json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    if (this.held === 0) return super.json<T>(method, path, options);
    this.held--;
    this.lists.push(options.query ?? {});
    this.pending++;
    return new Promise<T>((_, reject) => {
      const signal = options.signal!;
      signal.addEventListener('abort', () => {
        this.pending--;
        reject(signal.reason);
      });
    });
  }
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000 && !condition(); i++) await flush();
  assert.ok(condition(), `timed out waiting for ${what}`);
}

describe('watch() during an outage', () => {
  it('sends a LIST again at once when the API server is found ready while the one sent during the outage is held', async () => {
    const transport = new StartingServer(1);
    transport.onList = () => ({ items: [object('a', '3')], metadata: { resourceVersion: '5' } });
    // A request got no response: the outage gate probes /readyz until it answers 200.
    transport.connectivity.failed(refused());
    const events: WatchEvent<KubeObject>[] = [];
    const errors: WatchErrorInfo[] = [];
    const sub = watch(transport, Widgets, {
      clock: new ManualClock(),
      random: () => 0,
      onError: (_error, info) => errors.push(info),
    }).subscribe((event) => events.push(event));
    await until(() => transport.pending === 1, 'the LIST the starting server holds');

    transport.connectivity.ready(); // the gate's probe got 200
    await until(() => events.some((e) => e.type === 'SYNCED'), 'the sync');

    assert.equal(transport.lists.length, 2, 'the held LIST was sent again');
    assert.equal(transport.pending, 0, 'the held LIST was abandoned');
    assert.deepEqual(
      events.map((e) => (e.type === 'SYNCED' ? 'SYNCED' : `${e.type} ${e.object.metadata?.name}`)),
      ['ADDED a', 'SYNCED'],
    );
    assert.deepEqual(errors, [], 'no failure reported: the server never answered the first one');
    sub.unsubscribe();
  });

  it('leaves a LIST sent outside an outage alone when the gate finds the server ready', async () => {
    const transport = new StartingServer(1);
    const sub = watch(transport, Widgets, { clock: new ManualClock(), random: () => 0 }).subscribe(() => {});
    await until(() => transport.pending === 1, 'the LIST');

    transport.connectivity.ready();
    for (let i = 0; i < 20; i++) await flush();

    assert.equal(transport.pending, 1, 'still waiting for its answer');
    assert.equal(transport.lists.length, 1);
    sub.unsubscribe();
  });

  it('reopens a WATCH sent during the outage and not yet answered when the server is found ready', async () => {
    const transport = new StartingServer(0);
    transport.onList = () => ({ items: [object('a', '3')], metadata: { resourceVersion: '5' } });
    transport.connectivity.failed(refused());
    const sub = watch(transport, Widgets, { clock: new ManualClock(), random: () => 0 }).subscribe(() => {});
    const first = await transport.watchNumber(0);
    assert.equal(first.query.resourceVersion, '5');

    transport.connectivity.ready();
    await until(() => transport.streams.length === 2, 'the second WATCH');

    assert.equal(transport.streams[1]!.query.resourceVersion, '5', 'from where the list left off: nothing is lost');
    sub.unsubscribe();
  });
});
