import { resourceName, type KubeObject, type ObjectRef, type ResourceDescriptor } from '@nestor/core';
import { getCustomResourceMetadata } from '../crd/custom-resource.decorator.js';
import { isObservable, type Observable } from 'rxjs';
import type { ManagedControllerOptions } from '../runtime/controller/managed-controller.js';
import type { ObjectTimer } from '../runtime/controller/object-timers.js';
import type { Mapped, WatchSource } from '../runtime/controller/event-sources.js';
import type { FieldIndexer } from '../runtime/cache/field-index.js';
import type { Predicate } from '../runtime/controller/predicates.js';
import { defaultFinalizerName, withFinalizer } from '../runtime/controller/reconcilers/finalizer.js';
import type { ReconcileRequest, Reconciler } from '../runtime/controller/reconciler.js';
import { asNestLogger } from './nest-logger.js';
import { describeKind, isOwnedKind } from './controller-metadata.js';
import type { DiscoveredController } from './operator.explorer.js';
import * as messages from './operator.messages.js';
import type { ReconcileContext } from './reconcile-context.js';

type Method = (...args: unknown[]) => unknown;

/**
 * Maps a discovered class to the runtime's controller options: its decorated methods
 * become the reconciler (wrapped with the runtime's finalizer), the mappers
 * and the sources. Behaviour lives in the runtime; this is only the translation.
 */
export function bindController(found: DiscoveredController, namespace?: string): ManagedControllerOptions<KubeObject> {
  const { className, instance, options } = found;
  const kind = (type: Parameters<typeof describeKind>[1]) =>
    describeKind(className, type) as ResourceDescriptor<KubeObject>;
  const call = (method: string, ...args: unknown[]) => (instance[method] as Method).apply(instance, args);
  const resource = found.resource ? kind(found.resource) : undefined;
  const name = options.name ?? className;

  let reconcile: Reconciler<KubeObject> = (request) =>
    call(found.reconcile, request.object ?? request.ref, contextOf(request)) as ReturnType<Reconciler<KubeObject>>;
  const watchNamespace = options.namespaces ? undefined : (options.namespace ?? namespace);
  if (found.finalizer && resource) {
    const foreign = !found.resource || !getCustomResourceMetadata(found.resource);
    if (
      foreign &&
      !watchNamespace &&
      !options.namespaces &&
      !options.labelSelector &&
      !options.fieldSelector &&
      !found.finalizer.unscoped
    ) {
      throw new Error(messages.UNSCOPED_FINALIZER(className, resourceName(resource)));
    }
    const method = found.finalizer.method;
    reconcile = withFinalizer(reconcile, {
      name: found.finalizer.name ?? defaultFinalizerName(resource),
      finalize: (object, request) => call(method, object, contextOf(request)) as Promise<void>,
    });
  }

  const watches: WatchSource<KubeObject>[] = found.watches.map((watch) => {
    const given = watch.options.namespace;
    // A function (ownNamespace) is asked once, here, at start-up.
    const watchedNamespace = typeof given === 'function' ? given(namespace) : (given ?? namespace);
    return {
      resource: kind(watch.resource),
      map: (object, event) => call(watch.method, object, event) as Mapped | Promise<Mapped>,
      ...(watch.options.namespaces
        ? { namespaces: watch.options.namespaces }
        : watchedNamespace
          ? { namespace: watchedNamespace }
          : {}),
      ...(watch.options.metadataOnly ? { metadataOnly: true } : {}),
      ...(watch.options.keep !== undefined ? { keep: watch.options.keep } : {}),
      ...(watch.options.labelSelector ? { labelSelector: watch.options.labelSelector } : {}),
      ...(watch.options.fieldSelector ? { fieldSelector: watch.options.fieldSelector } : {}),
      ...(watch.options.predicates ? { predicates: watch.options.predicates as Predicate<KubeObject>[] } : {}),
      ...(watch.options.clusters ? { clusters: watch.options.clusters } : {}),
    };
  });

  const sources = found.sources.map((method) => {
    const stream = call(method);
    if (!isObservable(stream)) throw new Error(messages.SOURCE_NOT_OBSERVABLE(className, method));
    return { name: `${className}.${method}()`, stream: stream as Observable<ObjectRef | ObjectRef[]> };
  });

  const timers: ObjectTimer<KubeObject>[] = found.timers.map((timer) => ({
    name: `${className}.${timer.method}()`,
    intervalMs: timer.intervalMs,
    ...(timer.initialDelayMs !== undefined ? { initialDelayMs: timer.initialDelayMs } : {}),
    run: (request) => call(timer.method, request.object, contextOf(request)) as Promise<void>,
  }));

  return {
    name,
    ...(resource ? { resource } : {}),
    ...(timers.length ? { timers } : {}),
    reconcile,
    ...(watchNamespace ? { namespace: watchNamespace } : {}),
    ...(options.namespaces ? { namespaces: options.namespaces } : {}),
    ...(options.labelSelector ? { labelSelector: options.labelSelector } : {}),
    ...(options.fieldSelector ? { fieldSelector: options.fieldSelector } : {}),
    ...(options.predicates ? { predicates: options.predicates as Predicate<KubeObject>[] } : {}),
    ...(options.indexes ? { indexes: options.indexes as Record<string, FieldIndexer<KubeObject>> } : {}),
    owns: (options.owns ?? []).map((entry) =>
      isOwnedKind(entry)
        ? {
            resource: kind(entry.resource),
            metadataOnly: entry.metadataOnly ?? false,
            ...(entry.keep !== undefined ? { keep: entry.keep } : {}),
          }
        : kind(entry),
    ),
    watches,
    sources,
    ...(options.maxConcurrentReconciles ? { maxConcurrentReconciles: options.maxConcurrentReconciles } : {}),
    ...(options.reconcileTimeoutMs ? { reconcileTimeoutMs: options.reconcileTimeoutMs } : {}),
    ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
    ...(options.sharded === false ? { sharded: false } : {}),
    ...(options.clusters ? { clusters: options.clusters } : {}),
  };
}

/** What a @Reconcile() or @Finalizer() method gets beside the object. */
function contextOf(request: ReconcileRequest<KubeObject>): ReconcileContext {
  return {
    client: request.client,
    request: request.ref,
    key: request.key,
    signal: request.signal,
    attempt: request.attempt,
    reconcileId: request.reconcileId,
    cluster: request.cluster,
    log: asNestLogger(request.log),
  };
}
