import 'reflect-metadata';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Injectable, Module, Scope, type INestApplicationContext } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import type { V1ConfigMap, V1Deployment } from '../client/kinds.js';
import { TestEnvironment, waitFor } from '@nestor/testing';
import {
  ConfigMap,
  Controller,
  CustomResource,
  Deployment,
  Finalizer,
  KubeClient,
  OperatorModule,
  Reconcile,
  TerminalError,
  Watches,
  defaultFinalizerName,
  resourceOf,
  type ObjectRef,
  type ReconcileContext,
  type ReconcileResult,
} from '../index.js';
import { bootOperatorApp } from '../test-support/operator-app.js';
import { WIDGET_CRD, Widget, widget } from '../test-support/widget.js';

let env: TestEnvironment;

before(async () => {
  env = await TestEnvironment.start({ crds: [WIDGET_CRD] });
});
after(() => env.stop());

/** Boots an application context with the operator watching one fresh namespace. */
function boot(namespace: string, providers: unknown[]): Promise<INestApplicationContext> {
  return bootOperatorApp({ kubeConfig: env.kubeConfig, namespace, shutdownGraceMs: 10_000, providers });
}

const widgets = resourceOf(Widget);
const path = (ns: string, name = '') => `/apis/test.nestor.dev/v1/namespaces/${ns}/widgets${name ? `/${name}` : ''}`;
const createWidget = (ns: string, name: string, spec: Widget['spec'] = { size: 1 }) =>
  env.client.request<Widget>('POST', path(ns), widget(ns, name, spec));
const deploymentFor = (w: Widget): V1Deployment => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: w.metadata.name!, namespace: w.metadata.namespace! },
  spec: {
    replicas: w.spec.size,
    selector: { matchLabels: { app: w.metadata.name! } },
    template: {
      metadata: { labels: { app: w.metadata.name! } },
      spec: { containers: [{ name: 'main', image: 'registry.example/widget:1' }] },
    },
  },
});

/** Counts reconciles per object name. */
class Counter {
  readonly counts = new Map<string, number>();
  hit(name: string): number {
    const n = (this.counts.get(name) ?? 0) + 1;
    this.counts.set(name, n);
    return n;
  }
  of(name: string): number {
    return this.counts.get(name) ?? 0;
  }
}

describe('OperatorModule', () => {
  it("injects the application's providers into a controller and reconciles owned Deployments back", async () => {
    @Injectable()
    class Sizing {
      replicasFor(w: Widget) {
        return w.spec.size * 2;
      }
    }

    @Controller(Widget, { owns: [Deployment] })
    class WidgetController {
      readonly counter = new Counter();
      constructor(
        private readonly kube: KubeClient,
        private readonly sizing: Sizing,
      ) {}

      @Reconcile()
      async reconcile(w: Widget, ctx: ReconcileContext): Promise<void> {
        assert.equal(ctx.request.name, w.metadata.name);
        this.counter.hit(w.metadata.name!);
        const deployment = deploymentFor(w);
        deployment.spec!.replicas = this.sizing.replicasFor(w);
        await this.kube.apply(deployment, { owner: w });
      }
    }

    const ns = await env.createNamespace('nest-owns');
    const app = await boot(ns, [Sizing, WidgetController]);
    try {
      const controller = app.get(WidgetController);
      await createWidget(ns, 'alpha', { size: 2 });
      const deployments = `/apis/apps/v1/namespaces/${ns}/deployments/alpha`;
      const first = await waitFor(
        async () =>
          (await env.client.raw('GET', deployments)).status === 200 &&
          env.client.request<V1Deployment>('GET', deployments),
        { what: 'the owned Deployment' },
      );
      assert.equal(first.spec?.replicas, 4, 'replicas come from the injected Sizing provider');
      assert.equal(first.metadata?.ownerReferences?.[0]?.kind, 'Widget');
      assert.equal(first.metadata?.ownerReferences?.[0]?.controller, true);

      // Changing the owned Deployment reconciles its owner, which sets it back.
      const before = controller.counter.of('alpha');
      await env.client.request('PATCH', deployments, { spec: { replicas: 9 } }, 'application/merge-patch+json');
      // A reconcile already in flight may set it back before the one the change caused
      // has begun, so wait for both: the value restored and a reconcile after the patch.
      await waitFor(
        async () =>
          controller.counter.of('alpha') > before &&
          (await env.client.request<V1Deployment>('GET', deployments)).spec?.replicas === 4,
        { what: 'a reconcile after the patch, and the Deployment set back to 4 replicas' },
      );

      // Deleting it reconciles the owner, which creates it again.
      await env.client.request('DELETE', deployments);
      const recreated = await waitFor(
        async () => {
          const d = await env.client.request<V1Deployment>('GET', deployments).catch(() => undefined);
          return d && d.metadata?.uid !== first.metadata?.uid ? d : undefined;
        },
        { what: 'the Deployment to be recreated' },
      );
      assert.equal(recreated.spec?.replicas, 4);
    } finally {
      await app.close();
    }
  });

  it('reconciles the objects a @Watches mapper names when a ConfigMap changes', async () => {
    @Controller(Widget)
    class WatchingController {
      readonly counter = new Counter();

      @Reconcile()
      reconcile(w: Widget): void {
        this.counter.hit(w.metadata.name!);
      }

      @Watches(ConfigMap)
      fromConfigMap(cm: V1ConfigMap): ObjectRef[] {
        const target = cm.metadata?.labels?.['widget'];
        return target ? [{ namespace: cm.metadata!.namespace!, name: target }] : [];
      }
    }

    const ns = await env.createNamespace('nest-watches');
    const app = await boot(ns, [WatchingController]);
    try {
      const controller = app.get(WatchingController);
      await createWidget(ns, 'beta');
      await createWidget(ns, 'gamma');
      await waitFor(() => controller.counter.of('beta') >= 1 && controller.counter.of('gamma') >= 1, {
        what: 'first reconciles',
      });
      const gammaBefore = controller.counter.of('gamma');
      const betaBefore = controller.counter.of('beta');
      await env.client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
        metadata: { name: 'settings', labels: { widget: 'beta' } },
        data: { color: 'blue' },
      });
      await waitFor(() => controller.counter.of('beta') > betaBefore, {
        what: 'beta to be reconciled after its ConfigMap was created',
      });
      const betaAfterCreate = controller.counter.of('beta');
      await env.client.request(
        'PATCH',
        `/api/v1/namespaces/${ns}/configmaps/settings`,
        { data: { color: 'red' } },
        'application/merge-patch+json',
      );
      await waitFor(() => controller.counter.of('beta') > betaAfterCreate, {
        what: 'beta to be reconciled after its ConfigMap changed',
      });
      assert.equal(controller.counter.of('gamma'), gammaBefore, 'the mapper named only beta');
    } finally {
      await app.close();
    }
  });

  it('runs the finalizer once on delete, then the object goes; a throwing finalizer keeps it and retries', async () => {
    @Controller(Widget)
    class FinalizingController {
      constructor(private readonly kube: KubeClient) {}
      readonly attempts = new Counter();
      readonly successes = new Counter();
      /** The cleanup of these objects fails until the test lets it through. */
      readonly blocked = new Set<string>(['stubborn']);

      @Reconcile()
      reconcile(): void {}

      @Finalizer()
      async cleanup(w: Widget): Promise<void> {
        const name = w.metadata.name!;
        this.attempts.hit(name);
        if (this.blocked.has(name)) throw new Error(`cleanup of ${name} failed`);
        // A write during cleanup moves the resourceVersion; removing the finalizer must still work.
        await this.kube.patchStatus(w, { phase: 'Deleting' });
        this.successes.hit(name);
      }
    }

    const ns = await env.createNamespace('nest-finalizer');
    const app = await boot(ns, [FinalizingController]);
    try {
      const controller = app.get(FinalizingController);
      const finalizer = defaultFinalizerName(widgets);
      for (const name of ['easy', 'stubborn']) {
        await createWidget(ns, name);
        await waitFor(
          async () =>
            (await env.client.request<Widget>('GET', path(ns, name))).metadata.finalizers?.includes(finalizer),
          {
            what: `the finalizer on ${name}`,
          },
        );
      }
      await env.client.request('DELETE', path(ns, 'easy'));
      await waitFor(async () => (await env.client.raw('GET', path(ns, 'easy'))).status === 404, {
        what: 'easy to be gone',
      });
      assert.equal(controller.attempts.of('easy'), 1, 'the finalizer ran exactly once');

      await env.client.request('DELETE', path(ns, 'stubborn'));
      await waitFor(() => controller.attempts.of('stubborn') >= 3, { what: 'the failing finalizer to be retried' });
      const stuck = await env.client.request<Widget>('GET', path(ns, 'stubborn'));
      assert.ok(stuck.metadata.deletionTimestamp, 'the object is still there while its finalizer fails');
      assert.ok(stuck.metadata.finalizers?.includes(finalizer));
      controller.blocked.delete('stubborn');
      await waitFor(async () => (await env.client.raw('GET', path(ns, 'stubborn'))).status === 404, {
        what: 'stubborn to be gone',
      });
      assert.equal(controller.successes.of('stubborn'), 1, 'once it succeeds, it runs no more');
    } finally {
      await app.close();
    }
  });

  it('honours requeueAfter, retries thrown errors, and does not retry a TerminalError', async () => {
    @Controller(Widget)
    class ResultsController {
      readonly counter = new Counter();

      @Reconcile()
      reconcile(w: Widget): ReconcileResult | void {
        const n = this.counter.hit(w.metadata.name!);
        switch (w.spec.mode) {
          case 'requeue':
            return n < 3 ? { requeueAfter: 200 } : undefined;
          case 'throw':
            if (n < 3) throw new Error('transient failure');
            return;
          case 'throw-string':
            if (n < 2) throw 'a bare string';
            return;
          case 'terminal':
            throw new TerminalError('spec.mode "terminal" cannot be reconciled');
        }
      }
    }

    const ns = await env.createNamespace('nest-results');
    const app = await boot(ns, [ResultsController]);
    try {
      const controller = app.get(ResultsController);
      for (const mode of ['requeue', 'throw', 'throw-string', 'terminal'])
        await createWidget(ns, mode, { size: 1, mode });
      await waitFor(() => controller.counter.of('requeue') === 3, { what: 'two requeueAfter runs' });
      await waitFor(() => controller.counter.of('throw') === 3, { what: 'two retries after errors' });
      await waitFor(() => controller.counter.of('throw-string') === 2, { what: 'a retry after a non-Error throw' });
      // The retries above ran at 5-10 ms backoff; a terminal error would have been retried by now.
      await waitFor(() => controller.counter.of('terminal') === 1, { what: 'the terminal run' });
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(controller.counter.of('terminal'), 1, 'a TerminalError is not retried');
      assert.equal(controller.counter.of('requeue'), 3, 'no runs after the last requeueAfter');
    } finally {
      await app.close();
    }
  });

  it('lets a running reconcile finish on app.close(), and runs nothing after close returns', async () => {
    @Controller(Widget)
    class SlowController {
      started = 0;
      finished = 0;
      closed = false;
      ranAfterClose = false;

      @Reconcile()
      async reconcile(): Promise<void> {
        if (this.closed) this.ranAfterClose = true;
        this.started++;
        await new Promise((r) => setTimeout(r, 1500));
        this.finished++;
      }
    }

    const ns = await env.createNamespace('nest-shutdown');
    const app = await boot(ns, [SlowController]);
    const controller = app.get(SlowController);
    await createWidget(ns, 'slow');
    await waitFor(() => controller.started === 1, { what: 'the slow reconcile to start' });
    await env.client.request('PATCH', path(ns, 'slow'), { spec: { size: 2 } }, 'application/merge-patch+json');
    await app.close();
    controller.closed = true;
    assert.equal(controller.finished, controller.started, 'every started reconcile finished before close returned');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(controller.ranAfterClose, false);
  });
});

describe('OperatorModule.forRootAsync', () => {
  it('takes its options from a factory with injected configuration', async () => {
    @Injectable()
    class OperatorConfig {
      namespace = '';
    }
    @Module({ providers: [OperatorConfig], exports: [OperatorConfig] })
    class ConfigModule {}

    @Controller(Widget)
    class AsyncConfigured {
      readonly seen = new Set<string>();
      @Reconcile() reconcile(w: Widget) {
        this.seen.add(`${w.metadata.namespace}/${w.metadata.name}`);
      }
    }

    const ns = await env.createNamespace('nest-async');
    const other = await env.createNamespace('nest-async-other');
    const moduleRef = await Test.createTestingModule({
      imports: [
        ConfigModule,
        OperatorModule.forRootAsync({
          imports: [ConfigModule],
          inject: [OperatorConfig],
          useFactory: (config: OperatorConfig) => ({
            kubeConfig: env.kubeConfig,
            namespace: config.namespace,
            metrics: { port: 0 },
            health: { port: 0 },
          }),
        }),
      ],
      providers: [AsyncConfigured],
    })
      .overrideProvider(OperatorConfig)
      .useValue({ namespace: ns })
      .compile();
    await moduleRef.init();
    try {
      await createWidget(other, 'elsewhere');
      await createWidget(ns, 'here');
      const controller = moduleRef.get(AsyncConfigured);
      await waitFor(() => controller.seen.has(`${ns}/here`), { what: 'the widget in the configured namespace' });
      assert.ok(!controller.seen.has(`${other}/elsewhere`), 'objects outside the configured namespace are not watched');
    } finally {
      await moduleRef.close();
    }
  });
});

describe('OperatorModule.forRoot() without options', () => {
  it('takes its settings from the environment a Deployment gives it', async () => {
    @Controller(Widget)
    class Configured {
      readonly seen = new Set<string>();
      @Reconcile() reconcile(w: Widget) {
        this.seen.add(`${w.metadata.namespace}/${w.metadata.name}`);
      }
    }
    const ns = await env.createNamespace('nest-no-options');
    const other = await env.createNamespace('nest-no-options-other');
    const variables = {
      KUBECONFIG: env.kubeconfigPath,
      WATCH_NAMESPACE: ns,
      METRICS_BIND_ADDRESS: '0',
      HEALTH_PROBE_BIND_ADDRESS: '0',
    };
    const saved = Object.fromEntries(Object.keys(variables).map((k) => [k, process.env[k]]));
    Object.assign(process.env, variables);
    let moduleRef: TestingModule;
    try {
      moduleRef = await Test.createTestingModule({
        imports: [OperatorModule.forRoot()],
        providers: [Configured],
      }).compile();
      await moduleRef.init();
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
    try {
      await createWidget(other, 'elsewhere');
      await createWidget(ns, 'here');
      const controller = moduleRef.get(Configured);
      await waitFor(() => controller.seen.has(`${ns}/here`), { what: 'the widget in WATCH_NAMESPACE' });
      assert.ok(!controller.seen.has(`${other}/elsewhere`), 'objects outside WATCH_NAMESPACE are not watched');
    } finally {
      await moduleRef.close();
    }
  });
});

describe('OperatorModule start-up errors', () => {
  async function bootError(providers: unknown[]): Promise<string> {
    const ns = 'default';
    try {
      const app = await boot(ns, providers);
      await app.close();
    } catch (error) {
      return (error as Error).message;
    }
    assert.fail('start-up should have failed');
  }

  it('names a controller without @Reconcile', async () => {
    @Controller(Widget)
    class Lazy {}
    assert.match(await bootError([Lazy]), /Lazy is decorated with @Controller\(\) but has no @Reconcile\(\) method/);
  });

  it('names a controller with two @Reconcile methods', async () => {
    @Controller(Widget)
    class Twice {
      @Reconcile() one() {}
      @Reconcile() two() {}
    }
    assert.match(await bootError([Twice]), /Twice has 2 @Reconcile\(\) methods \(one, two\)/);
  });

  it('refuses a request-scoped controller', async () => {
    @Controller(Widget)
    @Injectable({ scope: Scope.REQUEST })
    class PerRequest {
      @Reconcile() reconcile() {}
    }
    assert.match(await bootError([PerRequest]), /PerRequest is request-scoped/);
  });

  it('names an unknown kind', async () => {
    class NotAKind {}
    @Controller(NotAKind as never)
    class Confused {
      @Reconcile() reconcile() {}
    }
    assert.match(await bootError([Confused]), /Confused: NotAKind is not a kind: decorate it with @CustomResource/);
  });

  it('names a custom resource whose CRD is not installed', async () => {
    @CustomResource({ group: 'missing.nestor.dev', version: 'v1', kind: 'Ghost' })
    class Ghost {}
    @Controller(Ghost)
    class Haunted {
      @Reconcile() reconcile() {}
    }
    assert.match(
      await bootError([Haunted]),
      /Haunted watches ghosts\.missing\.nestor\.dev, which the API server does not serve .*install its CRD/,
    );
  });

  it('refuses two controllers under one name', async () => {
    @Controller(Widget, { name: 'same' })
    class A {
      @Reconcile() reconcile() {}
    }
    @Controller(Widget, { name: 'same' })
    class B {
      @Reconcile() reconcile() {}
    }
    assert.match(await bootError([A, B]), /two controllers are named "same" \(A, B\)/);
  });
});
