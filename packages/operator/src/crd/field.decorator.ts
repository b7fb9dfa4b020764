import 'reflect-metadata';
import type { SchemaConstraints } from './schema-constraints.js';

export const FIELDS_METADATA = 'nestor:crd-fields';

/** A JSON type, or a class whose `@Field` properties describe an object. */
export type ScalarType = 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array';
/** A class, as `@Field({ type })` and the schema generator take it. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export type ClassType = Function;
/** `() => Spec` for a nested class, `() => [Item]` for an array of them, `() => 'integer'`, `() => ['string']`. */
export type TypeThunk = () => ClassType | ScalarType | [ClassType | ScalarType];

/** A CEL validation rule (x-kubernetes-validations). */
export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

/** Constraints that apply to a value; also used for array items and map values. */
export interface ValueOptions extends SchemaConstraints {
  type?: ScalarType | TypeThunk;
  /** Allowed values: a list, or a TypeScript enum object. */
  enum?: readonly (string | number | boolean)[] | Record<string, string | number>;
  /** Items are unique: written as `x-kubernetes-list-type: set` (the API server refuses `uniqueItems`). */
  uniqueItems?: boolean;
  /** int-or-string (x-kubernetes-int-or-string), as for ports and percentages. */
  intOrString?: boolean;
  /**
   * A resource quantity (`1Gi`, `500m`, 2): int-or-string with Kubernetes' quantity pattern,
   * as controller-gen writes resource.Quantity. Type the property `Quantity`.
   */
  quantity?: boolean;
  /** Keep fields the schema does not name (x-kubernetes-preserve-unknown-fields). */
  preserveUnknownFields?: boolean;
  /** A whole Kubernetes object (x-kubernetes-embedded-resource). */
  embeddedResource?: boolean;
  listType?: 'atomic' | 'set' | 'map';
  listMapKeys?: string[];
  mapType?: 'atomic' | 'granular';
  /** Constraints on each item of an array field. */
  items?: ValueOptions;
  /** A map: the type and constraints of its values (additionalProperties). */
  mapValues?: ValueOptions | ScalarType | TypeThunk;
  /** CEL rules. */
  rules?: ValidationRule[];
}

/** What `@Field` takes: the property's type, whether it is required, and the value's constraints. */
export interface FieldOptions extends ValueOptions {
  /**
   * Required unless false; a field with a default or a nullable one is optional by default.
   * A defaulted field is still always present in what the API server returns: declare it
   * `name!: Defaulted<T>`.
   */
  required?: boolean;
  /**
   * `'webhook'`: a mutating webhook (a `@Default()` handler) fills the field in, not a schema
   * `default`. Optional in the schema, for the writer, but present on what is read back:
   * declare it `name!: Defaulted<T>` as a schema-defaulted field, with its type, as
   * `Defaulted<T>` emits none: `@Field({ type: 'integer', defaultedBy: 'webhook' })`.
   */
  defaultedBy?: 'webhook';
  /** The JSON name when it differs from the property. */
  name?: string;
}

export interface FieldMetadata {
  property: string;
  options: FieldOptions;
  /** The design:type TypeScript emitted (String, Number, Boolean, Array, Object, a class). */
  designType?: ClassType;
}

/**
 * Declares a property of a custom resource (or of a nested class) for its CRD schema.
 *
 * ```ts
 * @Field({ type: 'integer', minimum: 1, maximum: 10, description: 'number of pods' }) size!: number;
 * @Field(() => [Port], { listType: 'map', listMapKeys: ['name'] }) ports!: Port[];
 * ```
 */
export function Field(typeOrOptions?: TypeThunk | FieldOptions, maybeOptions: FieldOptions = {}): PropertyDecorator {
  const options: FieldOptions =
    typeof typeOrOptions === 'function' ? { ...maybeOptions, type: typeOrOptions } : { ...(typeOrOptions ?? {}) };
  return (target, property) => {
    if (typeof property === 'symbol') throw new Error('@Field() cannot decorate a symbol property');
    const designType = Reflect.getMetadata('design:type', target, property) as ClassType | undefined;
    const fields = [...getFields(target.constructor)];
    fields.push({ property, options, ...(designType ? { designType } : {}) });
    Reflect.defineMetadata(FIELDS_METADATA, fields, target.constructor);
  };
}

/** The @Field declarations of a class, including inherited ones. */
export function getFields(target: ClassType): readonly FieldMetadata[] {
  return (Reflect.getMetadata(FIELDS_METADATA, target) as FieldMetadata[] | undefined) ?? [];
}
