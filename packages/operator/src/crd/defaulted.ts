// Fields the API server fills in. A `@Field` with a `default` is optional in the CRD's
// schema, but every object a reconciler, a webhook or a watch receives has it: the API
// server applies schema defaults when it stores an object and when it reads one back. So
// the class declares such a field present, and a `?? default` in reconcile code would
// repeat the schema. Only the writer of an object may leave it out: `AsWritten<T>`.
//
// Legacy decorators cannot change a property's type, so the mark is the property's type.

declare const DEFAULTED: unique symbol;

/**
 * A field the API server fills in: it reads as a `T`, always present. The CRD's schema
 * default, or a mutating webhook's (then the field says `defaultedBy: 'webhook'`, no
 * `default`).
 *
 * ```ts
 * @Field({ type: 'integer', default: 3 }) replicas!: Defaulted<number>;
 * @Field({ type: 'string', defaultedBy: 'webhook' }) tier!: Defaulted<'gold' | 'silver'>;
 * ```
 *
 * Only the type carries the mark (an optional property no value has), so a `T` is a
 * `Defaulted<T>` and a `Defaulted<T>` is a `T`: nothing to convert either way. `null` and
 * `undefined` stay themselves (a mark on them would be `never`): `Defaulted<string | null>`
 * still reads `null` for a nullable field.
 */
export type Defaulted<T> = T extends null | undefined ? T : T & { readonly [DEFAULTED]?: true };

// A key is defaulted when its value's type has the mark among its keys (`any` has every key,
// and is not); the helpers are inline so that the API reference needs no private names.
// Unions (an enum, `T | null`) distribute: each member is written as it is.
/**
 * An object as its writer may send it: every `Defaulted` field optional, at any depth. For
 * objects a test or a client creates, e.g. `env.client.request<CacheCluster>('POST', path,
 * body satisfies AsWritten<CacheCluster>)`.
 */
export type AsWritten<T> = T extends string | number | boolean | bigint | symbol | null | undefined
  ? T // a marked primitive is still a primitive: 'Exact' & {mark} takes 'Exact', never any string
  : T extends (infer Item)[]
    ? AsWritten<Item>[]
    : T extends readonly (infer Item)[]
      ? readonly AsWritten<Item>[]
      : T extends (...args: never[]) => unknown
        ? T
        : T extends object
          ? {
              [
                K in keyof T as 0 extends 1 & T[K] ? K : typeof DEFAULTED extends keyof NonNullable<T[K]> ? never : K
              ]: AsWritten<T[K]>;
            } & {
              [
                K in keyof T as 0 extends 1 & T[K]
                  ? never
                  : typeof DEFAULTED extends keyof NonNullable<T[K]>
                    ? K
                    : never
              ]?: AsWritten<T[K]>;
            }
          : T;
