import { resourceName } from '@nestor/core';
import { resourceOf } from '../crd/custom-resource.decorator.js';
import type { InformerOptions } from '../runtime/cache/informer.js';
import type { KeepSettings } from '../runtime/cache/informer-cache.js';
import { checkKeep, type KeepChoice } from '../runtime/cache/keep-choice.js';
import { positiveDuration } from '../runtime/options-check.js';
import type { CacheOptions } from './operator-options.js';

/** What the shared InformerCache is built with: settings for every informer, and per kind. */
export interface CacheSettings {
  defaults: Pick<InformerOptions, 'transform' | 'resyncMs'>;
  byResource: Map<string, Pick<InformerOptions, 'transform' | 'resyncMs'>>;
  /** What owned and watched kinds keep when their controller does not say. */
  keeps: KeepSettings;
}

/** The module's `cache` option as the InformerCache takes it, checked once at start-up. */
export function cacheSettings(cache: CacheOptions = {}): CacheSettings {
  const defaults = informerSettings(cache, 'cache');
  const byResource = new Map<string, CacheSettings['defaults']>();
  const keepByResource = new Map<string, KeepChoice>();
  for (const [i, entry] of (cache.byKind ?? []).entries()) {
    const where = `cache.byKind[${i}]`;
    if (!entry || typeof entry !== 'object' || !entry.kind)
      throw new TypeError(
        `${where} must be { kind, transform?, resyncPeriodMs?, keep? } with kind a descriptor or @CustomResource class`,
      );
    const name = resourceName(resourceOf(entry.kind));
    if (byResource.has(name))
      throw new Error(`${where}: ${name} is listed twice in cache.byKind; give each kind one entry`);
    byResource.set(name, informerSettings(entry, `${where} (${name})`));
    const keep = checkKeep(entry.keep, `${where}.keep (${name})`);
    if (keep) keepByResource.set(name, keep);
  }
  const all = checkKeep(cache.keep, 'cache.keep');
  return { defaults, byResource, keeps: { ...(all ? { all } : {}), byResource: keepByResource } };
}

function informerSettings(
  given: { transform?: CacheOptions['transform']; resyncPeriodMs?: number },
  where: string,
): CacheSettings['defaults'] {
  if (given.transform !== undefined && typeof given.transform !== 'function')
    throw new TypeError(`${where}.transform must be a function from an object to the object to cache`);
  const settings: CacheSettings['defaults'] = {};
  if (given.transform) settings.transform = given.transform;
  // 0 turns resync off (for one kind, over a module-wide period).
  if (given.resyncPeriodMs !== undefined)
    settings.resyncMs =
      given.resyncPeriodMs === 0 ? 0 : positiveDuration(given.resyncPeriodMs, `${where}.resyncPeriodMs`);
  return settings;
}
