/**
 * The OpenAPI keywords a `@Field`'s options and its schema node share: a `@Field` copies
 * each of them into its node as it is. To add one, add it here and to KEYWORDS below
 * (the compiler refuses a KEYWORDS that misses one).
 */
export interface SchemaConstraints {
  description?: string;
  nullable?: boolean;
  default?: unknown;
  format?: string;
  minimum?: number;
  maximum?: number;
  /** The minimum itself is excluded (needs a minimum). */
  exclusiveMinimum?: boolean;
  /** The maximum itself is excluded (needs a maximum). */
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
}

/** Each key of SchemaConstraints, once, in the order they are written into a schema node. */
const KEYWORDS: { readonly [K in keyof Required<SchemaConstraints>]: null } = {
  description: null,
  nullable: null,
  default: null,
  format: null,
  minimum: null,
  maximum: null,
  exclusiveMinimum: null,
  exclusiveMaximum: null,
  multipleOf: null,
  minLength: null,
  maxLength: null,
  pattern: null,
  minItems: null,
  maxItems: null,
  minProperties: null,
  maxProperties: null,
};

/** The keywords the schema generator copies from a @Field's options into its node. */
export const SCHEMA_CONSTRAINT_KEYS = Object.keys(KEYWORDS) as ReadonlyArray<keyof SchemaConstraints>;

/** Copies the keywords set in `from` into `to`. */
export function copySchemaConstraints(to: SchemaConstraints, from: SchemaConstraints): void {
  for (const key of SCHEMA_CONSTRAINT_KEYS) copyKeyword(to, from, key);
}

function copyKeyword<K extends keyof SchemaConstraints>(to: SchemaConstraints, from: SchemaConstraints, key: K): void {
  if (from[key] !== undefined) to[key] = from[key];
}
