import type { Type } from '@nestjs/common';
import { MetadataScanner } from '@nestjs/core';
import { allVersionsOf, getCustomResourceMetadata } from '../crd/custom-resource.decorator.js';
import type { ClassType } from '../crd/field.decorator.js';
import { HubSpokeConverter, type SpokeConversion } from '../webhooks/hub-spoke-converter.js';
import type {
  ConversionMetadata,
  ConversionMethodMetadata,
  ConversionOptions,
} from './decorators/conversion.decorator.js';
import { OPERATOR_CONVERSION_METADATA, OPERATOR_CONVERSION_METHOD_METADATA } from './operator.constants.js';
import * as messages from './operator.messages.js';

/** A `@Conversion` class as its decorators describe it: the one reading, as readWebhookDefinition. */
export interface ConversionDefinition {
  className: string;
  target: Type;
  /** The hub's `@CustomResource` class. */
  hub: ClassType;
  group: string;
  kind: string;
  hubVersion: string;
  /** The CRD's name, `<plural>.<group>`. */
  crdName: string;
  /** Per spoke version, its class and the two methods' names. */
  spokes: Array<{ version: string; spoke: ClassType; toHub: string; fromHub: string }>;
  options: ConversionOptions;
}

const scanner = new MetadataScanner();

const DECORATORS = { toHub: '@ConvertToHub', fromHub: '@ConvertFromHub' } as const;

/**
 * The definition of a `@Conversion` class, or undefined for any other class. Throws, saying
 * what to fix, when the hub or a spoke is not a version of one kind, when a version converts
 * one way only, or when a version of the kind has no conversion at all.
 */
export function readConversionDefinition(target: Type): ConversionDefinition | undefined {
  const metadata = Reflect.getMetadata(OPERATOR_CONVERSION_METADATA, target) as ConversionMetadata | undefined;
  if (!metadata) return undefined;
  const className = target.name;
  const hub = getCustomResourceMetadata(metadata.hub ?? {});
  if (!hub) throw new Error(messages.CONVERSION_HUB_NOT_A_KIND(className, metadata.hub?.name ?? String(metadata.hub)));
  const hubName = metadata.hub.name;
  const crdName = `${hub.plural}.${hub.group}`;

  // version -> direction -> { spoke, methods }
  const found = new Map<string, { spoke: ClassType; toHub: string[]; fromHub: string[] }>();
  const prototype = target.prototype as Record<string, unknown>;
  for (const method of scanner.getAllMethodNames(prototype)) {
    const fn = prototype[method];
    if (typeof fn !== 'function') continue;
    const marks = Reflect.getMetadata(OPERATOR_CONVERSION_METHOD_METADATA, fn) as
      ConversionMethodMetadata[] | undefined;
    if (!marks?.length) continue;
    if (marks.length > 1) throw new Error(messages.CONVERSION_TWO_MARKS(className, method));
    const { direction, spoke } = marks[0]!;
    const decorator = DECORATORS[direction];
    const spokeName = spoke?.name ?? String(spoke);
    const fail = (detail: string) =>
      new Error(messages.CONVERSION_SPOKE_NOT_A_VERSION(className, decorator, spokeName, detail));
    const version = getCustomResourceMetadata(spoke ?? {});
    if (!version) throw fail(`${spokeName} is not decorated with @CustomResource({ group, version, kind })`);
    if (version.group !== hub.group || version.kind !== hub.kind || version.plural !== hub.plural) {
      throw fail(
        `${spokeName} is ${version.group} ${version.kind}, not a version of the hub ${hubName} (${hub.group} ${hub.kind})`,
      );
    }
    if (version.version === hub.version) {
      throw fail(`${spokeName} is ${version.version}, the hub's version: the hub needs no conversion`);
    }
    const entry = found.get(version.version) ?? { spoke, toHub: [], fromHub: [] };
    if (entry.spoke !== spoke) {
      throw fail(`${entry.spoke.name} is version ${version.version} too: one class per version`);
    }
    entry[direction].push(method);
    found.set(version.version, entry);
  }
  if (found.size === 0) throw new Error(messages.CONVERSION_WITHOUT_METHODS(className, hubName));

  const spokes: ConversionDefinition['spokes'] = [];
  for (const [version, { spoke, toHub, fromHub }] of found) {
    for (const [direction, methods] of [
      ['toHub', toHub],
      ['fromHub', fromHub],
    ] as const) {
      if (methods.length > 1) {
        throw new Error(messages.CONVERSION_TWO_METHODS(className, `${DECORATORS[direction]}(${spoke.name})`, methods));
      }
    }
    if (!toHub.length || !fromHub.length) {
      const [present, missing, signature] = toHub.length
        ? [`@ConvertToHub(${spoke.name})`, `@ConvertFromHub(${spoke.name})`, `(hub: ${hubName}) => ${spoke.name}`]
        : [`@ConvertFromHub(${spoke.name})`, `@ConvertToHub(${spoke.name})`, `(spoke: ${spoke.name}) => ${hubName}`];
      throw new Error(messages.CONVERSION_MISSING_DIRECTION(className, present, missing, signature));
    }
    spokes.push({ version, spoke, toHub: toHub[0]!, fromHub: fromHub[0]! });
  }
  // Every version of the kind this process defines goes into its CRD: each must convert.
  for (const other of allVersionsOf([metadata.hub])) {
    const version = getCustomResourceMetadata(other)!.version;
    if (version !== hub.version && !found.has(version)) {
      throw new Error(messages.CONVERSION_VERSION_WITHOUT_METHODS(className, hub.kind, version, other.name));
    }
  }
  return {
    className,
    target,
    hub: metadata.hub,
    group: hub.group,
    kind: hub.kind,
    hubVersion: hub.version,
    crdName,
    spokes,
    options: metadata.options,
  };
}

/** The runtime converter of a definition, calling the methods of its instance. */
export function converterOf(definition: ConversionDefinition, instance: Record<string, unknown>): HubSpokeConverter {
  const bound = (method: string) => (instance[method] as (object: unknown) => never).bind(instance);
  const spokes: Record<string, SpokeConversion> = {};
  for (const { version, toHub, fromHub } of definition.spokes) {
    spokes[version] = { toHub: bound(toHub), fromHub: bound(fromHub) };
  }
  return new HubSpokeConverter({
    group: definition.group,
    kind: definition.kind,
    hub: definition.hubVersion,
    spokes,
    ...(definition.options.keepLostData !== undefined ? { keepLostData: definition.options.keepLostData } : {}),
    ...(definition.options.maxConversionDataBytes !== undefined
      ? { maxConversionDataBytes: definition.options.maxConversionDataBytes }
      : {}),
  });
}
