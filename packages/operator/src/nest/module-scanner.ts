import type { DynamicModule, ForwardReference, Type } from '@nestjs/common';
import { MODULE_METADATA } from '@nestjs/common/constants.js';
import type { ControllerAccess } from '../manifests/rbac.js';
import { readConversionDefinition, type ConversionDefinition } from './conversion-metadata.js';
import { controllerAccess, readControllerDefinition } from './controller-metadata.js';
import { readWebhookDefinition } from './webhook-metadata.js';

/** A `@Controller` class as its decorators describe it, read without creating it. */
export interface ScannedController extends ControllerAccess {
  className: string;
  target: Type;
}

type ModuleEntry = Type | DynamicModule | ForwardReference | Promise<DynamicModule> | undefined;

const METADATA_KEYS = {
  imports: MODULE_METADATA.IMPORTS,
  providers: MODULE_METADATA.PROVIDERS,
  controllers: MODULE_METADATA.CONTROLLERS,
} as const;

/**
 * Reads a class's `@Controller`, `@Finalizer` and `@Watches` decorators without instantiating
 * it; undefined for a class that is not a controller. Throws on misused decorators, as
 * the application would at start-up.
 */
export function describeController(target: Type): ScannedController | undefined {
  const definition = readControllerDefinition(target);
  if (!definition) return undefined;
  return { className: definition.className, target, ...controllerAccess(definition) };
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

/** Every provider and controller class of a module and the modules it imports, once each. */
async function classesOfModule(root: Type | DynamicModule): Promise<Type[]> {
  const seenModules = new Set<unknown>();
  const found = new Set<Type>();

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
    const lists = (key: 'imports' | 'providers' | 'controllers') => [
      ...((moduleClass && (Reflect.getMetadata(METADATA_KEYS[key], moduleClass) as unknown[] | undefined)) || []),
      ...((dynamic?.[key] as unknown[] | undefined) ?? []),
    ];
    for (const provider of lists('providers')) {
      if (typeof provider === 'function') visitClass(provider);
      else if (provider && typeof provider === 'object') {
        const p = provider as { useClass?: unknown; useValue?: unknown };
        if (p.useClass) visitClass(p.useClass);
        else if (p.useValue && typeof p.useValue === 'object') visitClass((p.useValue as object).constructor);
      }
    }
    for (const controller of lists('controllers')) visitClass(controller);
    for (const imported of lists('imports')) await visit(imported as ModuleEntry, name);
  };

  await visit(root, root && typeof root === 'object' ? root.module.name : (root as Type).name);
  return [...found];
}
