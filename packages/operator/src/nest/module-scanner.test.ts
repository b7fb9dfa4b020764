import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Injectable, Module, forwardRef, type DynamicModule } from '@nestjs/common';
import { ConfigMap, Deployment, Secret, Service } from '../client/kinds.js';
import { CustomResource } from '../crd/custom-resource.decorator.js';
import { Controller } from './decorators/controller.decorator.js';
import { Finalizer } from './decorators/finalizer.decorator.js';
import { Reconcile } from './decorators/reconcile.decorator.js';
import { Watches } from './decorators/watches.decorator.js';
import { OperatorModule } from './operator.module.js';
import {
  controllersOfModule,
  conversionsOfModule,
  describeController,
  operatorOptionsOfModule,
} from './module-scanner.js';
import { Conversion, ConvertFromHub, ConvertToHub } from './decorators/conversion.decorator.js';
import { moduleMetadataOf } from './module-metadata.js';

@CustomResource({ group: 'scan.example.com', version: 'v1', kind: 'Thing' })
class Thing {}

@Controller(Thing, { owns: [Deployment], writes: [Service], reads: [Secret], namespace: 'things' })
class ThingController {
  @Reconcile() reconcile() {}
  @Finalizer() cleanup() {}
  @Watches(ConfigMap) fromConfigMap() {}
}

class BaseController {
  @Watches(Secret) fromSecret() {}
}

@Controller(ConfigMap)
class InheritingController extends BaseController {
  @Reconcile() reconcile() {}
}

@Controller(Deployment)
class InControllersArray {
  @Reconcile() reconcile() {}
}

@Controller(Secret)
class ViaUseClass {
  @Reconcile() reconcile() {}
}

@Controller(Thing, { name: 'async' })
class FromAsyncModule {
  @Reconcile() reconcile() {}
}

@Injectable()
class PlainService {}

@Module({ providers: [PlainService, { provide: 'TOKEN', useClass: ViaUseClass }] })
class DynamicHost {
  static register(): DynamicModule {
    return { module: DynamicHost, controllers: [InControllersArray], imports: [forwardRef(() => CycleModule)] };
  }
}

@Module({ imports: [forwardRef(() => AppModule)], providers: [InheritingController] })
class CycleModule {}

@Module({
  imports: [
    OperatorModule.forRoot({ kubeConfig: '/nonexistent/kubeconfig' }),
    forwardRef(() => CycleModule),
    DynamicHost.register(),
    Promise.resolve<DynamicModule>({ module: class AsyncModule {}, providers: [FromAsyncModule] }),
  ],
  providers: [ThingController, ThingController],
})
class AppModule {}

describe('describeController', () => {
  it('reads the kind, owned, written, read and watched kinds, the namespace and the finalizer from the decorators', () => {
    const described = describeController(ThingController);
    assert.deepEqual(described, {
      className: 'ThingController',
      target: ThingController,
      resource: Thing,
      owns: [Deployment],
      writes: [Service],
      reads: [Secret],
      namespace: 'things',
      watches: [ConfigMap],
      finalizer: true,
    });
    assert.deepEqual(describeController(InheritingController)?.watches, [Secret], 'inherited @Watches methods count');
    assert.equal(describeController(PlainService), undefined);
  });

  it('asks no rights in the operator’s cluster for what runs or is watched only in member clusters', () => {
    @Controller(ConfigMap, { clusters: 'members', owns: [Deployment] })
    class InMembers {
      @Reconcile() reconcile(): void {}
    }
    @Controller(Thing)
    class Aware {
      @Reconcile() reconcile(): void {}
      @Watches(Secret, { clusters: 'members', namespace: 'apps' }) fromMembers(): undefined {
        return undefined;
      }
      @Watches(Service) fromHere(): undefined {
        return undefined;
      }
    }
    const members = describeController(InMembers)!;
    assert.deepEqual([members.resource, members.owns, members.watches], [undefined, [], []]);
    const aware = describeController(Aware)!;
    assert.deepEqual([aware.resource, aware.watches, aware.watchNamespaces], [Thing, [Service], undefined]);
  });
});

describe('moduleMetadataOf', () => {
  it('reads the lists @Module() recorded, under the keys the decorator itself uses', () => {
    assert.deepEqual(moduleMetadataOf(DynamicHost), {
      imports: [],
      providers: [PlainService, { provide: 'TOKEN', useClass: ViaUseClass }],
      controllers: [],
    });
    assert.equal(moduleMetadataOf(PlainService), undefined, 'a provider is not a module');
    assert.equal(moduleMetadataOf(class Empty {}), undefined);
  });
});

describe('controllersOfModule', () => {
  it('walks imports, dynamic and async modules, forwardRef cycles, providers, controllers and useClass, without a cluster', async () => {
    const found = await controllersOfModule(AppModule);
    assert.deepEqual(found.map((c) => c.className).sort(), [
      'FromAsyncModule',
      'InControllersArray',
      'InheritingController',
      'ThingController',
      'ViaUseClass',
    ]);
  });

  it('names the module whose import is undefined (a circular import between files)', async () => {
    @Module({ imports: [undefined as never] })
    class Broken {}
    await assert.rejects(controllersOfModule(Broken), /Broken imports undefined: .*forwardRef/);
  });
});

describe('conversionsOfModule', () => {
  @CustomResource({ group: 'scan.example.com', version: 'v2', kind: 'Converted' })
  class ConvertedV2 {}
  @CustomResource({ group: 'scan.example.com', version: 'v1', kind: 'Converted' })
  class ConvertedV1 {}

  @Conversion(ConvertedV2)
  class ConvertedConversion {
    @ConvertToHub(ConvertedV1) toHub() {}
    @ConvertFromHub(ConvertedV1) fromHub() {}
  }

  @Module({ providers: [ConvertedConversion] })
  class Feature {}

  @Module({ imports: [Feature], providers: [PlainService] })
  class Root {}

  it('finds the @Conversion classes of the module and its imports', async () => {
    const conversions = await conversionsOfModule(Root);
    assert.deepEqual(
      conversions.map((c) => [c.className, c.crdName, c.hub]),
      [['ConvertedConversion', 'converteds.scan.example.com', ConvertedV2]],
    );
  });
});

describe('operatorOptionsOfModule', () => {
  it('finds the options forRoot() was given, in the module or one it imports', async () => {
    assert.deepEqual(await operatorOptionsOfModule(AppModule), {
      from: 'static',
      options: { kubeConfig: '/nonexistent/kubeconfig' },
    });
    @Module({ imports: [OperatorModule.forRootAsync({ useFactory: () => ({}) })] })
    class AsyncApp {}
    assert.deepEqual(await operatorOptionsOfModule(AsyncApp), { from: 'runtime' });
    @Module({})
    class Bare {}
    assert.deepEqual(await operatorOptionsOfModule(Bare), { from: 'none' });
  });

  it('refuses OperatorModule.forRoot() imported twice', async () => {
    @Module({ imports: [OperatorModule.forRoot({}), OperatorModule.forRoot({ namespace: 'x' })] })
    class Twice {}
    await assert.rejects(operatorOptionsOfModule(Twice), /OperatorModule is imported 2 times/);
  });
});
