import { DEFAULT_FIELD_MANAGER, type KubeObject } from '@nestor/core';
import type { EventObjectReference } from './event-series.js';

// An Event's fields as the API server takes them: references, qualified names, byte limits.

/** The ObjectReference of an Event's regarding or related object. */
export function referenceTo(object: KubeObject): EventObjectReference {
  const meta = object.metadata ?? {};
  return {
    ...(object.apiVersion ? { apiVersion: object.apiVersion } : {}),
    ...(object.kind ? { kind: object.kind } : {}),
    ...(meta.name ? { name: meta.name } : {}),
    ...(meta.namespace ? { namespace: meta.namespace } : {}),
    ...(meta.uid ? { uid: meta.uid } : {}),
    ...(meta.resourceVersion ? { resourceVersion: meta.resourceVersion } : {}),
  };
}

const QUALIFIED_NAME =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

/**
 * reportingController must be a qualified name (`[prefix/]name`, name up to 63 characters
 * of letters, digits, '-', '_', '.'): a controller named otherwise is made into one.
 */
export function qualifiedName(name: string): string {
  let made = qualifiedNames.get(name);
  if (made === undefined) {
    made = mendName(name);
    // Controller names are few; a cap keeps arbitrary reportingController options from growing it.
    if (qualifiedNames.size < 1024) qualifiedNames.set(name, made);
  }
  return made;
}

/** Names already checked (the check is a regular expression, on every record()). */
const qualifiedNames = new Map<string, string>();

function mendName(name: string): string {
  if (QUALIFIED_NAME.test(name)) return name;
  const made = name
    .replace(/[^-A-Za-z0-9_.]/g, '-')
    .slice(0, 63)
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
  return made || DEFAULT_FIELD_MANAGER;
}

/** At most `max` UTF-8 bytes (the API server counts bytes), cut on a character. */
export function limitBytes(text: string, max: number): string {
  if (text.length * 3 <= max || Buffer.byteLength(text) <= max) return text;
  let cut = text.slice(0, max);
  while (Buffer.byteLength(cut) > max) cut = cut.slice(0, -1);
  return cut;
}
