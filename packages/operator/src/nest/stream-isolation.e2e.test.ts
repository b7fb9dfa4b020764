import 'reflect-metadata';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { INestApplicationContext } from '@nestjs/common';
import type { V1ConfigMap, V1Secret } from '../client/kinds.js';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { Observable } from 'rxjs';
import {
  ConfigMap,
  Controller,
  Manager,
  OperatorMetrics,
  Reconcile,
  Secret,
  Source,
  Watches,
  type ObjectRef,
} from '../index.js';
import { createConfigMap } from '../test-support/e2e-helpers.js';
import { bootOperatorApp } from '../test-support/operator-app.js';

// A failing stream must not stop the controller: before, one throwing predicate or mapper,
// or one @Source that errored, ended every stream of the controller while the probes
// stayed green. Here each fault happens first, and then ordinary work must still arrive.

let env: TestEnvironment;
before(async () => {
  env = await TestEnvironment.start();
});
after(() => env.stop());

@Controller(ConfigMap, {
  name: 'isolated',
  predicates: [
    (event) => {
      if ((event.object as V1ConfigMap).metadata?.labels?.['poison'] === 'predicate') {
        throw new Error('predicate poisoned');
      }
      return true;
    },
  ],
})
class IsolatedController {
  /** Reconciles per ConfigMap name. */
  readonly reconciled = new Map<string, number>();
  subscriptions = 0;

  @Reconcile()
  reconcile(object: V1ConfigMap): void {
    const name = object.metadata!.name!;
    this.reconciled.set(name, (this.reconciled.get(name) ?? 0) + 1);
  }

  count(name: string): number {
    return this.reconciled.get(name) ?? 0;
  }

  @Watches(Secret)
  fromSecret(secret: V1Secret): ObjectRef {
    if (secret.metadata?.labels?.['poison'] === 'mapper') throw new Error('mapper poisoned');
    return { namespace: secret.metadata!.namespace!, name: 'mapped-target' };
  }

  /** Emits a request for `source-target`, a bad one, then fails; the framework subscribes again. */
  @Source()
  flaky(): Observable<ObjectRef | ObjectRef[]> {
    return new Observable((subscriber) => {
      this.subscriptions++;
      subscriber.next({ namespace: IsolatedController.namespace, name: 'source-target' });
      subscriber.next([null as unknown as ObjectRef]);
      subscriber.error(new Error('the external API is down'));
    });
  }

  static namespace = '';
}

describe('a failing stream is isolated', () => {
  let app: INestApplicationContext;
  let namespace: string;

  before(async () => {
    namespace = await env.createNamespace('isolation');
    IsolatedController.namespace = namespace;
    await createConfigMap(env.client, namespace, 'source-target');
    await createConfigMap(env.client, namespace, 'mapped-target');
    app = await bootOperatorApp({ kubeConfig: env.kubeConfig, namespace, providers: [IsolatedController] });
  });
  after(() => app?.close());

  it('skips what a throwing predicate, a throwing mapper and a bad request poison, and keeps reconciling', async () => {
    const controller = app.get(IsolatedController);
    await createConfigMap(env.client, namespace, 'poisoned', { labels: { poison: 'predicate' } });
    await env.client.request('POST', `/api/v1/namespaces/${namespace}/secrets`, {
      metadata: { name: 'poisoned', labels: { poison: 'mapper' } },
    });
    // Work that arrives after the faults, on the primary stream and on the watch.
    await createConfigMap(env.client, namespace, 'after-faults');
    await waitFor(() => controller.count('after-faults') >= 1 && controller.count('mapped-target') >= 1, {
      timeoutMs: 20_000,
      what: 'the ConfigMaps to be reconciled after a predicate threw',
    });
    const before = controller.count('mapped-target');
    await env.client.request('POST', `/api/v1/namespaces/${namespace}/secrets`, { metadata: { name: 'fine' } });
    await waitFor(() => controller.count('mapped-target') > before, {
      timeoutMs: 20_000,
      what: 'the Secret created after the mapper threw to reconcile its ConfigMap',
    });
    assert.equal(controller.count('poisoned'), 0, 'the event whose predicate threw was skipped');
  });

  it('subscribes a failed @Source again, with backoff, and counts every fault in metrics', async () => {
    const controller = app.get(IsolatedController);
    // source-target is reconciled once from the cache; more reconciles come from the source.
    await waitFor(() => controller.subscriptions >= 3 && controller.count('source-target') >= 2, {
      timeoutMs: 20_000,
      what: 'the failed source to be subscribed again and its new request reconciled',
    });
    const text = await app.get(OperatorMetrics).registry.metrics();
    const count = (stream: string, fault: string) =>
      Number(
        new RegExp(
          `nestor_controller_stream_faults_total\\{controller="isolated",stream="${stream.replace(/[.()]/g, '\\$&')}",fault="${fault}"\\} (\\d+)`,
        ).exec(text)?.[1] ?? 0,
      );
    assert.ok(count('configmaps', 'predicate') >= 1, text);
    assert.ok(count('watches secrets', 'mapper') >= 1, text);
    assert.ok(count('IsolatedController.flaky()', 'source-error') >= 1, text);
    assert.ok(count('IsolatedController.flaky()', 'invalid-request') >= 1, text);
  });

  it('stays ready: every stream of the controller is live', () => {
    const health = app.get(Manager).health();
    const check = health.checks.find((c) => c.name === 'controller:isolated');
    assert.deepEqual(check, { name: 'controller:isolated', ok: true });
    assert.equal(health.ready, true, JSON.stringify(health.checks));
  });
});
