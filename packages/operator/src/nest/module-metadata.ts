import { Module } from '@nestjs/common';

/** The lists of a `@Module()` class that say what it brings: its imports, providers and controllers. */
export interface ModuleLists {
  /** Modules, dynamic modules (or promises of them) and forwardRefs. */
  imports: unknown[];
  /** Classes and provider objects (`useClass`, `useValue`, `useFactory`, ...). */
  providers: unknown[];
  /** Nest controller classes. */
  controllers: unknown[];
}

const LISTS = ['imports', 'providers', 'controllers'] as const;
type ListName = (typeof LISTS)[number];

let keys: Record<ListName, string | symbol> | undefined;

/**
 * The metadata keys `@Module()` records each list under. Nest exports them only from an
 * internal entry (`@nestjs/common/constants.js`, `@nestjs/common/internal`), so they are learned
 * from the public decorator itself, once: a class of this file's own is decorated with a
 * marker in each list, and the key whose value holds that marker is the list's.
 */
function moduleMetadataKeys(): Record<ListName, string | symbol> {
  if (keys) return keys;
  const markers = { imports: class {}, providers: class {}, controllers: class {} };
  class Probe {}
  Module({ imports: [markers.imports], providers: [markers.providers], controllers: [markers.controllers] })(Probe);
  const found: Partial<Record<ListName, string | symbol>> = {};
  for (const key of Reflect.getOwnMetadataKeys(Probe) as Array<string | symbol>) {
    const value: unknown = Reflect.getOwnMetadata(key, Probe);
    for (const list of LISTS) if (Array.isArray(value) && value.includes(markers[list])) found[list] = key;
  }
  const missing = LISTS.filter((list) => found[list] === undefined);
  if (missing.length > 0) {
    throw new Error(
      `@nestjs/common's @Module() did not record its ${missing.join(', ')} as metadata of the class: this Nest version is outside the peer range of @nestor/operator`,
    );
  }
  keys = found as Record<ListName, string | symbol>;
  return keys;
}

/**
 * The imports, providers and controllers a `@Module()` class declares (a list it does not
 * declare is empty), as the decorator recorded them; undefined for a class that declares
 * none (an empty `@Module({})`, or not a module). A dynamic module's own lists are on the
 * object `forRoot()` returned, not here.
 */
export function moduleMetadataOf(target: object): ModuleLists | undefined {
  const metadataKeys = moduleMetadataKeys();
  let declared = false;
  const lists = {} as ModuleLists;
  for (const list of LISTS) {
    const value: unknown = Reflect.getMetadata(metadataKeys[list], target);
    declared ||= value !== undefined;
    lists[list] = Array.isArray(value) ? value : [];
  }
  return declared ? lists : undefined;
}
