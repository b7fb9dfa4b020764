// `@Watches(Kind, { namespace })` with a namespace known only at start-up: `ownNamespace`
// (the operator's own) or another function. What the controller watches, and what the
// manifests grant for it.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { KubeObject } from '@nestor/core';
import { ConfigMap, Secret } from '../client/kinds.js';
import { ownNamespace } from '../runtime/own-namespace.js';
import { CustomResource } from '../crd/custom-resource.decorator.js';
import type { ResourceEvent } from '../runtime/controller/predicates.js';
import { bindController } from './controller-binding.js';
import { controllerAccess, readControllerDefinition } from './controller-metadata.js';
import { Controller } from './decorators/controller.decorator.js';
import { Reconcile } from './decorators/reconcile.decorator.js';
import { Watches } from './decorators/watches.decorator.js';

@CustomResource({ group: 'watches.example.com', version: 'v1', kind: 'CacheCluster' })
class CacheCluster {}

const seen: Array<{ name: string | undefined; type: string }> = [];

@Controller(CacheCluster)
class CacheClusterController {
  @Reconcile()
  reconcile(): void {}

  @Watches(ConfigMap, { namespace: ownNamespace, labelSelector: 'cache.example.com/backups' })
  backups(configMap: KubeObject, event: ResourceEvent<KubeObject>) {
    seen.push({ name: configMap.metadata?.name, type: event.type });
    return { namespace: 'shop', name: 'cache' };
  }

  @Watches(Secret, { namespace: (moduleNamespace) => `${moduleNamespace ?? 'all'}-secrets` })
  secrets() {
    return undefined;
  }
}

function bound(moduleNamespace: string | undefined) {
  const definition = readControllerDefinition(CacheClusterController)!;
  const instance = new CacheClusterController() as unknown as Record<string, unknown>;
  return bindController({ ...definition, instance }, moduleNamespace);
}

describe('@Watches in a namespace known at start-up', () => {
  const podNamespace = process.env.POD_NAMESPACE;
  afterEach(() => {
    if (podNamespace === undefined) delete process.env.POD_NAMESPACE;
    else process.env.POD_NAMESPACE = podNamespace;
  });

  it('watches the operator’s own namespace with ownNamespace: POD_NAMESPACE, else the module’s', () => {
    process.env.POD_NAMESPACE = 'cache-system';
    const [backups, secrets] = bound('shop').watches!;
    assert.equal(backups!.namespace, 'cache-system');
    assert.equal(backups!.labelSelector, 'cache.example.com/backups');
    assert.equal(secrets!.namespace, 'shop-secrets', 'a function gets the module’s namespace');

    delete process.env.POD_NAMESPACE;
    assert.equal(bound('shop').watches![0]!.namespace, 'shop', 'a local run: the module’s namespace');
  });

  it('gives the mapper the watched object and the event', () => {
    seen.length = 0;
    const [backups] = bound('shop').watches!;
    const object = { metadata: { name: 'backups', namespace: 'cache-system' } };
    assert.deepEqual(backups!.map(object, { type: 'updated', object, old: object }), {
      namespace: 'shop',
      name: 'cache',
    });
    assert.deepEqual(seen, [{ name: 'backups', type: 'updated' }]);
  });

  it('tells the manifests ownNamespace is the operator’s namespace, and another function is unknown', () => {
    const access = controllerAccess(readControllerDefinition(CacheClusterController)!);
    assert.deepEqual(access.watchNamespaces, [{ operatorNamespace: true }, { atStartUp: true }]);
  });
});
