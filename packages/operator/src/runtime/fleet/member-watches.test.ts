import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type KubeObject, type ObjectRef, silentLogger } from '@nestor/core';
import { NEVER, Subject } from 'rxjs';
import type { Informer } from '../cache/informer.js';
import { MAPPERS_IN_FLIGHT } from '../controller/event-sources.js';
import type { ResourceEvent } from '../controller/predicates.js';
import type { Member } from './member.js';
import { memberWatch } from './member-watches.js';

const Secrets = { group: '', version: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true };
const secret = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: 'ns' },
});

/** An engaged member whose cache hands out one informer, fed by `events$`. */
function engagedMember(name: string) {
  const events$ = new Subject<ResourceEvent<KubeObject>>();
  const informer = { events$, list: () => [], filling: false } as unknown as Informer<KubeObject>;
  const member = {
    name,
    cluster: {
      informers: { keepOf: () => undefined, acquire: () => ({ informer, release() {} }), readersOf: () => [informer] },
    },
  } as unknown as Member;
  return { member, events$, informer };
}

describe('a watch of a kind in member clusters', () => {
  it("notes each key's event with the member's cache before it queues the key", () => {
    const { member, events$, informer } = engagedMember('east');
    const source = memberWatch(
      { engaged: () => [member], changes$: NEVER },
      {
        resource: Secrets,
        clusters: 'members',
        map: (object) => ({ namespace: 'ns', name: `for-${object.metadata!.name!}` }),
      },
      silentLogger,
    );
    const order: string[] = [];
    source.noteWith!((key, from, object, readers) => {
      assert.equal(from, informer);
      assert.deepEqual(readers(Secrets, 'ns'), [informer], "the member's readers, not the controller's");
      order.push(`noted ${key} at ${object.metadata!.resourceVersion!}`);
    });
    const subscription = source.stream.subscribe((refs) => order.push(`queued ${JSON.stringify(refs)}`));
    events$.next({
      type: 'added',
      object: { ...secret('a'), metadata: { name: 'a', namespace: 'ns', resourceVersion: '7' } },
    });
    assert.deepEqual(order, ['noted ns/for-a at 7', 'queued [{"namespace":"ns","name":"for-a"}]']);
    subscription.unsubscribe();
  });

  it('names the member, and awaits an async mapper at most MAPPERS_IN_FLIGHT at once', async () => {
    const { member, events$ } = engagedMember('east');
    const pending: Array<() => void> = [];
    const clusters: Array<string | undefined> = [];
    let inFlight = 0;
    let most = 0;
    const source = memberWatch(
      { engaged: () => [member], changes$: NEVER },
      {
        resource: Secrets,
        clusters: 'members',
        map: async (object: KubeObject, event?: { cluster?: string }) => {
          clusters.push(event?.cluster);
          inFlight++;
          most = Math.max(most, inFlight);
          await new Promise<void>((resolve) => pending.push(resolve));
          inFlight--;
          return { namespace: 'ns', name: `for-${object.metadata!.name!}` };
        },
      },
      silentLogger,
    );
    const emitted: ObjectRef[][] = [];
    const subscription = source.stream.subscribe((refs) => emitted.push(refs as ObjectRef[]));
    const count = MAPPERS_IN_FLIGHT + 4;
    for (let i = 0; i < count; i++) events$.next({ type: 'added', object: secret(`s${i}`) });
    await Promise.resolve();
    assert.equal(most, MAPPERS_IN_FLIGHT, 'no more mappers at once than the bound');
    while (emitted.length < count) {
      pending.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.equal(most, MAPPERS_IN_FLIGHT);
    assert.deepEqual(emitted[0], [{ namespace: 'ns', name: 'for-s0' }]);
    assert.deepEqual(new Set(clusters), new Set(['east']));
    subscription.unsubscribe();
  });
});
