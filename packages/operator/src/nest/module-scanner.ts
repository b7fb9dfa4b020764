import type { DynamicModule, ForwardReference, Type } from '@nestjs/common';
import type { ControllerAccess } from '../manifests/rbac.js';
import { readConversionDefinition, type ConversionDefinition } from './conversion-metadata.js';
import { controllerAccess, memberAccess, readControllerDefinition } from './controller-metadata.js';
import { moduleMetadataOf } from './module-metadata.js';
import { GIVEN_OPERATOR_OPTIONS } from './operator.module-definition.js';
import type { OperatorModuleOptions } from './interfaces/operator-options.interface.js';
import { readWebhookDefinition } from './webhook-metadata.js';

/** A `@Controller` class as its decorators describe it, read without creating it. */
export interface ScannedController extends ControllerAccess {
  className: string;
  target: Type;
  /** What it needs in each member cluster of a fleet (it runs there, or watches there); absent: nothing. */
  members?: ControllerAccess;
}

type ModuleEntry = Type | DynamicModule | ForwardReference | Promise<DynamicModule> | undefined;

/**
 * Reads a class's `@Controller`, `@Finalizer` and `@Watches` decorators without instantiating
 * it; undefined for a class that is not a controller. Throws on misused decorators, as
 * the application would at start-up.
 */
export function describeController(target: Type): ScannedController | undefined {
  const definition = readControllerDefinition(target);
  if (!definition) return undefined;
  const members = memberAccess(definition);
  return { className: definition.className, target, ...controllerAccess(definition), ...(members ? { members } : {}) };
}

/**
 * The `@Controller` classes of a Nest module and of every module it imports, found through
 * Nest's module metadata (imports, providers, controllers; dynamic modules, forwardRef,
 * async dynamic modules, `useClass` providers) without creating the application: no
 * provider factory runs and no cluster is needed. A controller added by a factory or at
 * run time through the OperatorRegistry is not seen.
 */
export async function controllersOfModule(root: Type | DynamicModule): Promise<ScannedController[]> {
  return (await classesOfModule(root)).flatMap((target) => describeController(target) ?? []);
}

/**
 * The `@Conversion` classes of a Nest module and the modules it imports, read as
 * controllersOfModule reads controllers (the kinds whose CRDs convert through the webhook).
 */
export async function conversionsOfModule(root: Type | DynamicModule): Promise<ConversionDefinition[]> {
  return (await classesOfModule(root)).flatMap((target) => readConversionDefinition(target) ?? []);
}

/**
 * The `@Webhook` classes of a Nest module and the modules it imports, read as
 * controllersOfModule reads controllers (for webhookConfigurationsOf).
 */
export async function webhooksOfModule(root: Type | DynamicModule): Promise<Type[]> {
  return (await classesOfModule(root)).filter((target) => readWebhookDefinition(target) !== undefined);
}

/**
 * What the module gives `OperatorModule`, read without creating the application:
 * `forRoot()`'s options (`static`), or `runtime` when `forRootAsync()` builds them at start-up
 * (unknown until then), or `none` when no module imports `OperatorModule`.
 */
export type ScannedOperatorOptions =
  { from: 'static'; options: OperatorModuleOptions } | { from: 'runtime' } | { from: 'none' };

/** The `OperatorModule.forRoot()` options of a Nest module or of a module it imports. */
export async function operatorOptionsOfModule(root: Type | DynamicModule): Promise<ScannedOperatorOptions> {
  const { optionProviders } = await walkModule(root);
  const [first] = optionProviders;
  if (!first) return { from: 'none' };
  if (optionProviders.length > 1)
    throw new Error(
      `OperatorModule is imported ${optionProviders.length} times with options: import OperatorModule.forRoot() once, in the root module`,
    );
  return 'useValue' in first
    ? { from: 'static', options: first.useValue as OperatorModuleOptions }
    : { from: 'runtime' };
}

/** Every provider and controller class of a module and the modules it imports, once each. */
async function classesOfModule(root: Type | DynamicModule): Promise<Type[]> {
  return (await walkModule(root)).classes;
}

async function walkModule(
  root: Type | DynamicModule,
): Promise<{ classes: Type[]; optionProviders: Array<{ useValue?: unknown }> }> {
  const seenModules = new Set<unknown>();
  const found = new Set<Type>();
  const optionProviders: Array<{ useValue?: unknown }> = [];

  const visitClass = (candidate: unknown) => {
    if (typeof candidate === 'function') found.add(candidate as Type);
  };

  const visit = async (entry: ModuleEntry, parent: string): Promise<void> => {
    let resolved: unknown = entry instanceof Promise ? await entry : entry;
    if (resolved && typeof resolved === 'object' && 'forwardRef' in resolved) {
      resolved = (resolved as ForwardReference<() => unknown>).forwardRef();
    }
    if (resolved === undefined || resolved === null) {
      throw new Error(
        `${parent} imports undefined: a circular import between files leaves one module undefined when the other loads. Wrap it in forwardRef(() => TheModule).`,
      );
    }
    if (seenModules.has(resolved)) return;
    seenModules.add(resolved);
    const dynamic = typeof resolved === 'object' ? (resolved as DynamicModule) : undefined;
    const moduleClass = (dynamic ? dynamic.module : resolved) as Type | undefined;
    const name = moduleClass?.name ?? parent;
    const declared = moduleClass ? moduleMetadataOf(moduleClass) : undefined;
    const lists = (key: 'imports' | 'providers' | 'controllers') => [
      ...(declared?.[key] ?? []),
      ...((dynamic?.[key] as unknown[] | undefined) ?? []),
    ];
    for (const provider of lists('providers')) {
      if (typeof provider === 'function') visitClass(provider);
      else if (provider && typeof provider === 'object') {
        const p = provider as { provide?: unknown; useClass?: unknown; useValue?: unknown };
        if (p.provide === GIVEN_OPERATOR_OPTIONS) optionProviders.push(p);
        else if (p.useClass) visitClass(p.useClass);
        else if (p.useValue && typeof p.useValue === 'object') visitClass((p.useValue as object).constructor);
      }
    }
    for (const controller of lists('controllers')) visitClass(controller);
    for (const imported of lists('imports')) await visit(imported as ModuleEntry, name);
  };

  await visit(root, root && typeof root === 'object' ? root.module.name : (root as Type).name);
  return { classes: [...found], optionProviders };
}
