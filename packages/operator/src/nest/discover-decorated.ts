import type { Type } from '@nestjs/common';
import type { DiscoveryService } from '@nestjs/core';

/** A decorated class the application provides, with the instance Nest created. */
export type Discovered<D> = D & { instance: Record<string, unknown> };

/**
 * Every class among the application's providers and controllers that `read` recognizes, once
 * each, with its singleton instance. A request-scoped one has no instance to call: refused
 * with `requestScoped(className)`.
 */
export function discoverDecorated<D extends { className: string }>(
  discovery: DiscoveryService,
  read: (target: Type) => D | undefined,
  requestScoped: (className: string) => string,
): Discovered<D>[] {
  const seen = new Set<unknown>();
  const found: Discovered<D>[] = [];
  for (const wrapper of [...discovery.getProviders(), ...discovery.getControllers()]) {
    const target = wrapper.metatype;
    if (!target || typeof target !== 'function' || seen.has(target)) continue;
    const definition = read(target as Type);
    if (!definition) continue;
    seen.add(target);
    if (!wrapper.isDependencyTreeStatic() || !wrapper.instance) throw new Error(requestScoped(definition.className));
    found.push({ ...definition, instance: wrapper.instance as Record<string, unknown> });
  }
  return found;
}

/** Throws `duplicate(key, classes)` for the first key that more than one class claims. */
export function refuseDuplicateKeys<D extends { className: string }>(
  found: readonly D[],
  keysOf: (item: D) => Iterable<string>,
  duplicate: (key: string, classes: string[]) => string,
): void {
  const byKey = new Map<string, string[]>();
  for (const item of found) {
    for (const key of keysOf(item)) byKey.set(key, [...(byKey.get(key) ?? []), item.className]);
  }
  for (const [key, classes] of byKey) {
    if (classes.length > 1) throw new Error(duplicate(key, classes));
  }
}
