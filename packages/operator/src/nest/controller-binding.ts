import { SpanStatusCode, trace } from '@opentelemetry/api';
import { isObservable, type Observable } from 'rxjs';
import type { KubeClient } from '../client/kube-client.js';
import { resourceOf, type ResourceType } from '../crd/custom-resource.decorator.js';
import type { ControllerAccess } from '../manifests/rbac.js';
import type {
  ControllerOptions as RuntimeControllerOptions,
  ReconcileRequest,
  WatchSource,
} from '../runtime/controller.js';
import type { KubeObject } from '../runtime/kube-object.js';
import type { ObjectRef } from '../runtime/object-ref.js';
import type { Predicate } from '../runtime/predicates.js';
import { toError, type ReconcileResult } from '../runtime/result.js';
import type { ResourceDescriptor } from '../runtime/resource.js';
import type { ControllerOptions } from './decorators/controller.decorator.js';
import type { WatchesOptions } from './decorators/watches.decorator.js';
import * as messages from './operator.messages.js';
import { asNestLogger } from './nest-logger.js';
import type { ReconcileContext } from './reconcile-context.js';

type Method = (...args: unknown[]) => unknown;

/** What the explorer found on one decorated class. */
export interface DiscoveredController {
  className: string;
  instance: Record<string, unknown>;
  resource?: ResourceType;
  options: ControllerOptions;
  reconcile: string;
  finalizer?: { method: string; name?: string };
  watches: Array<{ method: string; resource: ResourceType; options: WatchesOptions }>;
  sources: string[];
}

/** The kinds a discovered controller touches, for its RBAC rules and CRDs. */
export function controllerAccess(found: DiscoveredController): ControllerAccess {
  return {
    ...(found.resource ? { resource: found.resource } : {}),
    owns: found.options.owns ?? [],
    watches: found.watches.map((w) => w.resource),
    finalizer: found.finalizer !== undefined,
  };
}

/** The finalizer name used when @Finalizer() names none. */
export function defaultFinalizerName(resource: ResourceDescriptor): string {
  return `${resource.group || 'nestor.dev'}/finalizer`;
}

/**
 * Turns a discovered class into the runtime's controller options: the reconcile call with
 * the typed object and context, finalizer bookkeeping, owned and watched kinds, sources.
 */
export function bindController(
  found: DiscoveredController,
  kube: KubeClient,
  namespace?: string,
): RuntimeControllerOptions<KubeObject> {
  const { className, instance, options } = found;
  const kind = (type: ResourceType) => {
    try {
      const descriptor = resourceOf(type);
      kube.kinds.register(descriptor);
      return descriptor;
    } catch (error) {
      throw new Error(messages.INVALID_KIND(className, (error as Error).message), { cause: error });
    }
  };
  const resource = found.resource ? (kind(found.resource) as ResourceDescriptor<KubeObject>) : undefined;
  const call = (method: string, ...args: unknown[]) => (instance[method] as Method).apply(instance, args);
  const finalizerName =
    found.finalizer && resource ? (found.finalizer.name ?? defaultFinalizerName(resource)) : undefined;

  const controllerName = options.name ?? className;
  // One span per reconcile; a no-op unless the application installs an OpenTelemetry SDK.
  const tracer = trace.getTracer('@nestor/operator');
  const traced = (request: ReconcileRequest<KubeObject>) =>
    tracer.startActiveSpan(
      `reconcile ${controllerName}`,
      {
        attributes: {
          'nestor.controller': controllerName,
          'nestor.reconcile_id': request.reconcileId,
          'nestor.attempt': request.attempt,
          'k8s.namespace.name': request.ref.namespace ?? '',
          'nestor.object.name': request.ref.name,
        },
      },
      async (span) => {
        try {
          return await reconcileOnce(request);
        } catch (error) {
          const failure = toError(error);
          span.recordException(failure);
          span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
          throw error;
        } finally {
          span.end();
        }
      },
    );

  // UIDs whose finalizer this process just removed. The cache may still show the finalizer
  // for a moment, and a reconcile queued meanwhile must not run the cleanup again.
  const finalized = new RecentSet(60_000);

  const reconcileOnce = async (request: ReconcileRequest<KubeObject>): Promise<ReconcileResult | void> => {
    const ctx: ReconcileContext = {
      request: request.ref,
      key: request.key,
      signal: request.signal,
      attempt: request.attempt,
      reconcileId: request.reconcileId,
      log: asNestLogger(request.log),
    };
    let object = request.object;
    if (!resource || !object) return (await call(found.reconcile, request.ref, ctx)) as ReconcileResult | void;
    if (found.finalizer && finalizerName) {
      const finalizers = object.metadata?.finalizers ?? [];
      if (object.metadata?.deletionTimestamp) {
        const uid = object.metadata.uid ?? request.key;
        if (!finalizers.includes(finalizerName) || finalized.has(uid)) return; // cleaned up already, or never ours
        await call(found.finalizer.method, object, ctx);
        await kube.removeFinalizer(object, finalizerName);
        finalized.add(uid);
        return;
      }
      if (!finalizers.includes(finalizerName)) object = await kube.addFinalizer(object, finalizerName);
    }
    return (await call(found.reconcile, object, ctx)) as ReconcileResult | void;
  };

  const watches: WatchSource<KubeObject>[] = found.watches.map((watch) => ({
    resource: kind(watch.resource) as ResourceDescriptor<KubeObject>,
    map: (object) => call(watch.method, object) as ObjectRef[] | ObjectRef | undefined,
    ...((watch.options.namespace ?? namespace) ? { namespace: watch.options.namespace ?? namespace } : {}),
    ...(watch.options.labelSelector ? { labelSelector: watch.options.labelSelector } : {}),
    ...(watch.options.predicates ? { predicates: watch.options.predicates as Predicate<KubeObject>[] } : {}),
  }));

  const sources = found.sources.map((method) => {
    const stream = call(method);
    if (!isObservable(stream)) throw new Error(messages.SOURCE_NOT_OBSERVABLE(className, method));
    return stream as Observable<ObjectRef | ObjectRef[]>;
  });

  const watchNamespace = options.namespace ?? namespace;
  return {
    name: controllerName,
    ...(resource ? { resource } : {}),
    reconcile: traced,
    ...(watchNamespace ? { namespace: watchNamespace } : {}),
    ...(options.labelSelector ? { labelSelector: options.labelSelector } : {}),
    ...(options.predicates ? { predicates: options.predicates as Predicate<KubeObject>[] } : {}),
    owns: (options.owns ?? []).map(kind),
    watches,
    sources,
    ...(options.maxConcurrentReconciles ? { maxConcurrentReconciles: options.maxConcurrentReconciles } : {}),
    ...(options.reconcileTimeoutMs ? { reconcileTimeoutMs: options.reconcileTimeoutMs } : {}),
  };
}

/** A set whose entries expire after `ttlMs`; pruned on insert, oldest first, so it stays small. */
class RecentSet {
  private readonly expiries = new Map<string, number>();

  constructor(private readonly ttlMs: number) {}

  add(value: string): void {
    const now = Date.now();
    for (const [old, expiry] of this.expiries) {
      if (expiry > now) break; // insertion order is expiry order
      this.expiries.delete(old);
    }
    this.expiries.delete(value);
    this.expiries.set(value, now + this.ttlMs);
  }

  has(value: string): boolean {
    const expiry = this.expiries.get(value);
    return expiry !== undefined && expiry > Date.now();
  }
}
