import {
  getFields,
  type ClassType,
  type FieldOptions,
  type ScalarType,
  type TypeThunk,
  type ValueOptions,
} from './field.decorator.js';
import { isQuantity, QUANTITY_PATTERN } from './quantity.js';
import { copySchemaConstraints, type SchemaConstraints } from './schema-constraints.js';

/** An OpenAPI v3 schema node as apiextensions.k8s.io/v1 takes it (JSONSchemaProps). */
export interface JSONSchemaProps extends SchemaConstraints {
  type?: ScalarType;
  enum?: unknown[];
  uniqueItems?: boolean;
  required?: string[];
  properties?: Record<string, JSONSchemaProps>;
  items?: JSONSchemaProps;
  additionalProperties?: JSONSchemaProps;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: string;
  'x-kubernetes-validations'?: Array<Record<string, unknown>>;
}

/** A schema that cannot be expressed, with the path of the field that caused it. */
export class SchemaError extends Error {
  constructor(path: string, problem: string) {
    super(`${path}: ${problem}`);
    this.name = 'SchemaError';
  }
}

const SCALARS = new Set<string>(['string', 'integer', 'number', 'boolean', 'object', 'array']);

/**
 * The structural schema of a class from its `@Field` properties: every node typed, no $ref,
 * nested classes inlined. `path` names the class in error messages.
 */
export function schemaOf(target: ClassType, path = target.name, visiting: ClassType[] = []): JSONSchemaProps {
  if (visiting.includes(target)) {
    throw new SchemaError(
      path,
      `${target.name} contains itself; a structural schema cannot be recursive. Mark the field { preserveUnknownFields: true } or flatten the type.`,
    );
  }
  const fields = new Map(getFields(target).map((f) => [f.options.name ?? f.property, f]));
  const properties: Record<string, JSONSchemaProps> = {};
  const required: string[] = [];
  for (const [name, field] of fields) {
    const fieldPath = `${path}.${name}`;
    properties[name] = valueSchema(field.options, fieldPath, [...visiting, target], field.designType);
    if (isRequired(field.options, fieldPath)) required.push(name);
  }
  return { type: 'object', properties, ...(required.length ? { required } : {}) };
}

function isRequired(options: FieldOptions, path: string): boolean {
  if (options.defaultedBy !== undefined) {
    if (options.defaultedBy !== 'webhook') {
      throw new SchemaError(path, `defaultedBy is 'webhook' or absent, not ${JSON.stringify(options.defaultedBy)}`);
    }
    if (options.default !== undefined) {
      throw new SchemaError(path, "a field with a schema default is not defaultedBy: 'webhook': drop one of them");
    }
    if (options.required) {
      throw new SchemaError(path, 'a field the webhook defaults may be left out by its writer: it cannot be required');
    }
    return false; // the writer may leave it out: the webhook fills it before it is stored
  }
  return options.required ?? (options.default === undefined && !options.nullable);
}

function valueSchema(
  options: ValueOptions,
  path: string,
  visiting: ClassType[],
  designType?: ClassType,
): JSONSchemaProps {
  const schema = typeSchema(options, path, visiting, designType);
  applyConstraints(schema, options, path);
  return schema;
}

/** The type part of a node: from the explicit type, else from TypeScript's design:type. */
function typeSchema(
  options: ValueOptions,
  path: string,
  visiting: ClassType[],
  designType?: ClassType,
): JSONSchemaProps {
  if (options.quantity) return quantitySchema(options, path);
  if (options.intOrString) return { 'x-kubernetes-int-or-string': true };
  if (options.embeddedResource) {
    return { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true };
  }
  const declared = options.type;
  const resolved = typeof declared === 'function' && !isClass(declared) ? (declared as TypeThunk)() : declared;

  if (Array.isArray(resolved)) {
    if (resolved.length !== 1)
      throw new SchemaError(path, 'an array type is written () => [ItemType] with exactly one item type');
    return {
      type: 'array',
      items: valueSchema({ ...options.items, type: asType(resolved[0]!) }, `${path}[]`, visiting),
    };
  }
  if (typeof resolved === 'string') {
    if (!SCALARS.has(resolved))
      throw new SchemaError(path, `unknown type "${resolved}": use one of ${[...SCALARS].join(', ')}`);
    return scalarSchema(resolved as ScalarType, options, path, visiting);
  }
  if (typeof resolved === 'function') return classSchema(resolved, options, path, visiting);

  switch (designType) {
    case String:
      return { type: 'string' };
    case Number:
      return { type: 'number' };
    case Boolean:
      return { type: 'boolean' };
    case Date:
      throw dateError(path);
    case Array:
      if (options.items?.type) return { type: 'array', items: valueSchema(options.items, `${path}[]`, visiting) };
      throw new SchemaError(
        path,
        "an array field needs its item type: @Field(() => [Item]) or @Field({ type: () => ['string'] })",
      );
    case Object:
    case undefined: {
      const fromEnum = enumType(options);
      if (fromEnum) return { type: fromEnum };
      // A Defaulted<T> is emitted as Object: its default says what T is.
      const fromDefault = defaultType(options);
      if (fromDefault) return { type: fromDefault };
      if (options.preserveUnknownFields || options.mapValues) return scalarSchema('object', options, path, visiting);
      throw new SchemaError(
        path,
        "its type cannot be inferred (a union, an interface, any or unknown): give it explicitly, e.g. @Field({ type: 'string' }) or @Field(() => NestedClass)",
      );
    }
    default:
      return classSchema(designType, options, path, visiting);
  }
}

/** JSON has no dates: an object read back holds the string the API server sent, never a Date. */
function dateError(path: string): SchemaError {
  return new SchemaError(
    path,
    "a Date is a string on the wire (an object read back holds the RFC 3339 text, not a Date): declare it `string` with @Field({ format: 'date-time' }) and read it with Date.parse()",
  );
}

/** int-or-string with the quantity pattern; a default must be a quantity itself. */
function quantitySchema(options: ValueOptions, path: string): JSONSchemaProps {
  if (options.pattern !== undefined) throw new SchemaError(path, 'a quantity has its own pattern: drop `pattern`');
  if (options.default !== undefined && !isQuantity(options.default)) {
    throw new SchemaError(
      path,
      `the default ${JSON.stringify(options.default)} is not a quantity: write it as "1Gi", "500m" or an integer`,
    );
  }
  return { 'x-kubernetes-int-or-string': true, pattern: QUANTITY_PATTERN };
}

/** The JSON type TypeScript would have emitted for the default's value (string, number, boolean). */
function defaultType(options: ValueOptions): ScalarType | undefined {
  const type = typeof options.default;
  return type === 'string' || type === 'number' || type === 'boolean' ? type : undefined;
}

function scalarSchema(type: ScalarType, options: ValueOptions, path: string, visiting: ClassType[]): JSONSchemaProps {
  if (type === 'array') {
    if (!options.items?.type) throw new SchemaError(path, 'an array needs items: { type } for its item type');
    return { type: 'array', items: valueSchema(options.items, `${path}[]`, visiting) };
  }
  if (type === 'object') {
    if (options.mapValues) {
      const values = typeof options.mapValues === 'object' ? options.mapValues : { type: options.mapValues };
      return { type: 'object', additionalProperties: valueSchema(values, `${path}{}`, visiting) };
    }
    if (!options.preserveUnknownFields) {
      throw new SchemaError(
        path,
        'an object without properties needs mapValues (a map) or preserveUnknownFields: true',
      );
    }
    return { type: 'object' };
  }
  return { type };
}

function classSchema(target: ClassType, options: ValueOptions, path: string, visiting: ClassType[]): JSONSchemaProps {
  if (target === Date) throw dateError(path);
  if (getFields(target).length === 0 && !options.preserveUnknownFields) {
    throw new SchemaError(
      path,
      `${target.name} has no @Field properties: decorate them, or mark the field preserveUnknownFields`,
    );
  }
  return schemaOf(target, path, visiting);
}

function asType(type: ClassType | ScalarType): ScalarType | TypeThunk {
  return typeof type === 'string' ? type : () => type;
}

function isClass(fn: unknown): boolean {
  return typeof fn === 'function' && /^class[\s{]/.test(Function.prototype.toString.call(fn));
}

function applyConstraints(schema: JSONSchemaProps, options: ValueOptions, path: string): void {
  copySchemaConstraints(schema, options);
  if (options.enum) {
    schema.enum = Array.isArray(options.enum)
      ? [...options.enum]
      : enumValues(options.enum as Record<string, string | number>);
  }
  if (options.exclusiveMinimum && options.minimum === undefined)
    throw new SchemaError(path, 'exclusiveMinimum needs a minimum');
  if (options.exclusiveMaximum && options.maximum === undefined)
    throw new SchemaError(path, 'exclusiveMaximum needs a maximum');
  if (options.preserveUnknownFields) schema['x-kubernetes-preserve-unknown-fields'] = true;
  const listType = listTypeOf(schema, options, path);
  if (listType) {
    if (schema.type !== 'array') throw new SchemaError(path, 'listType applies to arrays only');
    schema['x-kubernetes-list-type'] = listType;
    const atomicItems =
      schema.items?.['x-kubernetes-map-type'] === 'atomic' || schema.items?.['x-kubernetes-list-type'] === 'atomic';
    if (listType === 'set' && !isScalar(schema.items) && !atomicItems) {
      throw new SchemaError(
        path,
        'a set (listType "set" or uniqueItems) needs scalar items (string, integer, number, boolean), or items marked mapType "atomic"',
      );
    }
    if (listType === 'map') {
      if (!options.listMapKeys?.length)
        throw new SchemaError(path, 'listType "map" needs listMapKeys naming the key fields');
      if (schema.items?.type !== 'object' || !schema.items.properties) {
        throw new SchemaError(path, 'listType "map" needs items that are objects (a class with @Field properties)');
      }
      const item = schema.items;
      const unknown = options.listMapKeys.filter((k) => !item.properties?.[k]);
      if (unknown.length)
        throw new SchemaError(path, `list map keys are not fields of the item: ${unknown.join(', ')}`);
      // The API server's rule: every key is required or has a default (as protocol in a Pod's ports).
      const missing = options.listMapKeys.filter(
        (k) => !item.required?.includes(k) && item.properties?.[k]?.default === undefined,
      );
      if (missing.length) {
        throw new SchemaError(
          path,
          `list map keys must be required fields of the item or have a default: ${missing.join(', ')}`,
        );
      }
      const notScalar = options.listMapKeys.filter((k) => !isScalar(item.properties?.[k]));
      if (notScalar.length) throw new SchemaError(path, `list map keys must be scalar fields: ${notScalar.join(', ')}`);
    }
  }
  if (options.listMapKeys && listType !== 'map') throw new SchemaError(path, 'listMapKeys needs listType "map"');
  if (options.listMapKeys) schema['x-kubernetes-list-map-keys'] = options.listMapKeys;
  if (options.mapType) {
    if (schema.type !== 'object') throw new SchemaError(path, 'mapType applies to objects (classes and maps) only');
    schema['x-kubernetes-map-type'] = options.mapType;
  }
  if (options.rules?.length) {
    schema['x-kubernetes-validations'] = options.rules.map((rule) =>
      Object.fromEntries(Object.entries(rule).filter(([, v]) => v !== undefined)),
    );
  }
}

/**
 * The list type, with uniqueItems written as Kubernetes wants it: the API server refuses
 * `uniqueItems: true` (its check is quadratic) and enforces `x-kubernetes-list-type: set`.
 */
function listTypeOf(schema: JSONSchemaProps, options: ValueOptions, path: string): ValueOptions['listType'] {
  if (!options.uniqueItems) return options.listType;
  if (schema.type !== 'array') throw new SchemaError(path, 'uniqueItems applies to arrays only');
  if (options.listType && options.listType !== 'set') {
    throw new SchemaError(
      path,
      `uniqueItems conflicts with listType "${options.listType}": a list of unique items is listType "set"`,
    );
  }
  return 'set';
}

function isScalar(schema: JSONSchemaProps | undefined): boolean {
  return (
    schema?.type === 'string' || schema?.type === 'integer' || schema?.type === 'number' || schema?.type === 'boolean'
  );
}

/** The type all of an enum's values share ('string', 'integer' or 'number'), if they share one. */
function enumType(options: ValueOptions): ScalarType | undefined {
  if (!options.enum) return undefined;
  const values = Array.isArray(options.enum)
    ? options.enum
    : enumValues(options.enum as Record<string, string | number>);
  if (values.length && values.every((v) => typeof v === 'string')) return 'string';
  if (values.length && values.every((v) => Number.isInteger(v))) return 'integer';
  if (values.length && values.every((v) => typeof v === 'number')) return 'number';
  return undefined;
}

/** A TypeScript enum's values (numeric enums carry reverse mappings, which are dropped). */
function enumValues(enumObject: Record<string, string | number>): Array<string | number> {
  return Object.entries(enumObject)
    .filter(([key]) => !/^\d+$/.test(key))
    .map(([, value]) => value);
}
