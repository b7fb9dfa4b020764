// The rules of the CRD compatibility check: what each one catches and what the author can do
// instead. The check (crd-compatibility.ts) names one of them in every finding, and an
// allowance (allowances.ts) names the one it accepts.

/** The rules, whole-CRD ones first, then those of a version's schema. */
export const COMPATIBILITY_RULES = [
  'crd-removed',
  'scope-changed',
  'stored-version-removed',
  'served-version-removed',
  'conversion-missing',
  'subresource-changed',
  'field-removed',
  'type-changed',
  'unknown-fields-pruned',
  'required-added',
  'enum-narrowed',
  'limit-tightened',
  'pattern-tightened',
  'cel-rule-added',
  'default-changed',
  'list-type-changed',
  'nullable-removed',
] as const;

/** One rule of the CRD compatibility check, e.g. `field-removed`. */
export type CompatibilityRule = (typeof COMPATIBILITY_RULES)[number];

/** One breaking change a rule found in a CRD: `version` names the version it concerns, if one. */
export interface CrdChange {
  rule: CompatibilityRule;
  version?: string;
  path: string;
  change: string;
}

/** What each rule means for objects already stored, and what to do instead of the change. */
export const RULE_REMEDIES: { readonly [R in CompatibilityRule]: string } = {
  'crd-removed':
    'deleting a CRD deletes every object of its kind: keep its @CustomResource class in the module, or allow it once no object of the kind is left',
  'scope-changed':
    'a kind cannot change scope in place: keep the scope, or define a new kind (another plural or group) and move the objects to it',
  'stored-version-removed':
    "the API server refuses a CRD that drops a version status.storedVersions lists: keep the version (served: false) until the storage-version migration rewrote every object and trimmed storedVersions, then give the cluster's storedVersions (--stored-versions <crd>=<versions>, or the CRD read back with kubectl get crd -o yaml)",
  'served-version-removed':
    "clients that use the version get 404s: keep serving it and mark it deprecated ({ deprecated: 'use v1' } on its @CustomResource) for a release, so that the API server warns them, then remove it",
  'conversion-missing':
    "without a conversion the API server serves a stored object in every version with only its apiVersion changed: add a @Conversion (hub and spokes) for the kind, or keep the versions' schemas the same",
  'subresource-changed':
    'the status and scale subresources decide which endpoint writes which part of an object: keep them, or change them in a new version with a conversion',
  'field-removed':
    'objects keep the field in etcd but lose it when read and on their next write: keep the field (say it is deprecated in its description), or drop it in a new version with a conversion that keeps its value',
  'type-changed':
    'stored values of the old type no longer validate, and typed clients break: keep the type and add a field of the new type beside it, or change it in a new version with a conversion',
  'unknown-fields-pruned':
    'fields the schema does not declare are dropped when objects are read and written: keep preserveUnknownFields, or declare every field the objects hold',
  'required-added':
    'objects written without the field are refused on their next update: give it a default (@Field({ default })), or leave it optional',
  'enum-narrowed':
    'objects that hold a value no longer listed are refused on their next update: keep the value (and map it in the controller), or narrow the enum in a new version with a conversion',
  'limit-tightened':
    'objects beyond the new limit are refused on their next update (ratcheting lets an unchanged field through, a changed or new object is refused): keep the old limit, or tighten it in a new version with a conversion',
  'pattern-tightened':
    'values the old pattern or format accepted may be refused on their next update: keep the old one, or allow it if the new one accepts every value the old one did',
  'cel-rule-added':
    'objects that break the new rule are refused on their next update: write it as a transition rule that lets unchanged values through (oldSelf), or allow it if every stored object passes it',
  'default-changed':
    'objects created before keep the old default and new ones get the new one (or none): keep the default, or change it in a new version with a conversion',
  'list-type-changed':
    'the list and map types decide how server-side apply merges the field and which items are valid: keep them, or change them in a new version with a conversion',
  'nullable-removed':
    'objects that hold null for the field are refused on their next update: keep nullable, or give the field a default',
};
