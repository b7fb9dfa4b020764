import { resourceName, type ResourceDescriptor } from '@nestor/core';
import type { Counter, Registry } from 'prom-client';
import { prom } from './prom-client.js';
import type { ClientReads, ReadSource } from '../runtime/manager/manager-options.js';

type Child = ReturnType<Counter<string>['labels']>;

/**
 * `nestor_client_reads_total{resource, verb, source}`: every KubeClient get and list, by
 * whether the cache or the API server answered it. A read is on the reconcile's hot path:
 * each (kind, verb, source) resolves its labelled child once.
 */
export class ClientReadMetrics implements ClientReads {
  private readonly counter: Counter<string>;
  private readonly children = new WeakMap<ResourceDescriptor, Map<string, Child>>();

  constructor(registry: Registry) {
    this.counter = new prom.Counter({
      name: 'nestor_client_reads_total',
      help: 'KubeClient reads (get, list) by kind and by what answered them: the informer cache or the API server',
      labelNames: ['resource', 'verb', 'source'],
      registers: [registry],
    });
  }

  read(resource: ResourceDescriptor, verb: 'get' | 'list', source: ReadSource): void {
    let byRead = this.children.get(resource);
    if (!byRead) this.children.set(resource, (byRead = new Map()));
    const key = `${verb} ${source}`;
    let child = byRead.get(key);
    if (!child) byRead.set(key, (child = this.counter.labels(resourceName(resource), verb, source)));
    child.inc();
  }
}
