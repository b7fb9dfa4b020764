// Small CRD pairs, one change each, and what the compatibility check must find in them: the
// unit tests assert these verdicts, and bench/crd-compat.mjs gives the same pairs to crdify
// to compare. A previous CRD's status.storedVersions is written in its status, where both
// tools read it.
import type { CompatibilityRule } from '../crd/compatibility/compatibility-rules.js';

export type CrdObject = Record<string, unknown>;

export interface CompatibilityCase {
  name: string;
  old: CrdObject;
  new: CrdObject;
  /** The findings, as `rule path` (version rules name their CRD path). */
  expected: string[];
}

type Node = Record<string, unknown>;

interface VersionSpec {
  name: string;
  served?: boolean;
  storage?: boolean;
  deprecated?: boolean;
  /** The properties of spec. */
  spec: Record<string, Node>;
  required?: string[];
  status?: boolean;
}

/** widgets.example.com with the given versions (the first is storage unless one says so). */
export function widgetCrd(
  versions: VersionSpec[],
  options: { scope?: string; conversion?: 'Webhook'; storedVersions?: string[] } = {},
): CrdObject {
  const storage = versions.some((v) => v.storage) ? undefined : versions[0]!.name;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      names: { kind: 'Widget', listKind: 'WidgetList', plural: 'widgets', singular: 'widget' },
      scope: options.scope ?? 'Namespaced',
      versions: versions.map((version) => ({
        name: version.name,
        served: version.served ?? true,
        storage: version.storage ?? version.name === storage,
        ...(version.deprecated ? { deprecated: true } : {}),
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              apiVersion: { type: 'string' },
              kind: { type: 'string' },
              metadata: { type: 'object' },
              spec: {
                type: 'object',
                properties: version.spec,
                ...(version.required ? { required: version.required } : {}),
              },
            },
          },
        },
        ...(version.status ? { subresources: { status: {} } } : {}),
      })),
      ...(options.conversion
        ? {
            conversion: {
              strategy: 'Webhook',
              webhook: {
                conversionReviewVersions: ['v1'],
                clientConfig: { service: { name: 'widgets-webhook', namespace: 'widgets', path: '/convert' } },
              },
            },
          }
        : {}),
    },
    ...(options.storedVersions ? { status: { storedVersions: options.storedVersions } } : {}),
  };
}

/** One version v1 whose spec holds these properties. */
function v1(spec: Record<string, Node>, more: Partial<VersionSpec> = {}): CrdObject {
  return widgetCrd([{ name: 'v1', spec, ...more }]);
}

/** A field change: spec.<field> before and after. */
function field(
  name: string,
  before: Node,
  after: Node,
  expected: CompatibilityRule | CompatibilityRule[] | [],
): CompatibilityCase {
  const rules = Array.isArray(expected) ? expected : [expected];
  return {
    name,
    old: v1({ size: before }),
    new: v1({ size: after }),
    expected: rules.map((rule) => `${rule} .spec.size`),
  };
}

const INT: Node = { type: 'integer' };
const STRING: Node = { type: 'string' };
const PORTS: Node = {
  type: 'array',
  items: { type: 'object', properties: { name: STRING, port: INT }, required: ['port'] },
};

export const COMPATIBILITY_CASES: CompatibilityCase[] = [
  { name: 'identical', old: v1({ size: INT }), new: v1({ size: INT }), expected: [] },
  field('description changed', { ...INT, description: 'old' }, { ...INT, description: 'new' }, []),
  {
    name: 'field removed',
    old: v1({ size: INT, mode: STRING }),
    new: v1({ size: INT }),
    expected: ['field-removed .spec.mode'],
  },
  {
    name: 'field added',
    old: v1({ size: INT }),
    new: v1({ size: INT, mode: STRING }),
    expected: [],
  },
  {
    name: 'field removed under preserved unknown fields',
    old: widgetCrd([{ name: 'v1', spec: { size: INT, mode: STRING } }]),
    new: (() => {
      const crd = v1({ size: INT });
      const spec = (crd.spec as { versions: Array<{ schema: { openAPIV3Schema: { properties: { spec: Node } } } }> })
        .versions[0]!.schema.openAPIV3Schema.properties.spec;
      spec['x-kubernetes-preserve-unknown-fields'] = true;
      return crd;
    })(),
    expected: [],
  },
  {
    name: 'field removed in list items',
    old: v1({ ports: PORTS }),
    new: v1({ ports: { type: 'array', items: { type: 'object', properties: { port: INT }, required: ['port'] } } }),
    expected: ['field-removed .spec.ports[*].name'],
  },
  {
    name: 'map values removed',
    old: v1({ labels: { type: 'object', additionalProperties: STRING } }),
    new: v1({ labels: { type: 'object', properties: { app: STRING } } }),
    expected: ['field-removed .spec.labels.*'],
  },
  field('type changed', INT, STRING, 'type-changed'),
  field('int-or-string made string', { 'x-kubernetes-int-or-string': true }, STRING, 'type-changed'),
  {
    name: 'object made string',
    old: v1({ size: { type: 'object', properties: { value: INT } } }),
    new: v1({ size: STRING }),
    expected: ['type-changed .spec.size'],
  },
  {
    name: 'required field added',
    old: v1({ size: INT }),
    new: v1({ size: INT, mode: STRING }, { required: ['mode'] }),
    expected: ['required-added .spec.mode'],
  },
  {
    name: 'existing field made required',
    old: v1({ size: INT, mode: STRING }),
    new: v1({ size: INT, mode: STRING }, { required: ['mode'] }),
    expected: ['required-added .spec.mode'],
  },
  {
    name: 'required field added with a default',
    old: v1({ size: INT }),
    new: v1({ size: INT, mode: { ...STRING, default: 'fast' } }, { required: ['mode'] }),
    expected: [],
  },
  {
    name: 'new optional object with a required field',
    old: v1({ size: INT }),
    new: v1({ size: INT, limits: { type: 'object', properties: { cpu: STRING }, required: ['cpu'] } }),
    expected: [],
  },
  field('enum value removed', { ...STRING, enum: ['a', 'b'] }, { ...STRING, enum: ['a'] }, 'enum-narrowed'),
  field('enum value added', { ...STRING, enum: ['a'] }, { ...STRING, enum: ['a', 'b'] }, []),
  field('enum added', STRING, { ...STRING, enum: ['a', 'b'] }, 'enum-narrowed'),
  field('enum removed', { ...STRING, enum: ['a'] }, STRING, []),
  field('maxLength lowered', { ...STRING, maxLength: 63 }, { ...STRING, maxLength: 10 }, 'limit-tightened'),
  field('maxLength raised', { ...STRING, maxLength: 10 }, { ...STRING, maxLength: 63 }, []),
  field('maximum added', INT, { ...INT, maximum: 10 }, 'limit-tightened'),
  field('maximum removed', { ...INT, maximum: 10 }, INT, []),
  field('minimum raised', { ...INT, minimum: 0 }, { ...INT, minimum: 1 }, 'limit-tightened'),
  field(
    'maximum made exclusive',
    { ...INT, maximum: 10 },
    { ...INT, maximum: 10, exclusiveMaximum: true },
    'limit-tightened',
  ),
  field(
    'minItems added',
    { type: 'array', items: STRING },
    { type: 'array', items: STRING, minItems: 1 },
    'limit-tightened',
  ),
  field(
    'maxItems lowered',
    { type: 'array', items: STRING, maxItems: 8 },
    { type: 'array', items: STRING, maxItems: 4 },
    'limit-tightened',
  ),
  field('multipleOf added', INT, { ...INT, multipleOf: 2 }, 'limit-tightened'),
  field('pattern added', STRING, { ...STRING, pattern: '^[a-z]+$' }, 'pattern-tightened'),
  field(
    'pattern changed',
    { ...STRING, pattern: '^[a-z]+$' },
    { ...STRING, pattern: '^[a-z0-9]+$' },
    'pattern-tightened',
  ),
  field('pattern removed', { ...STRING, pattern: '^[a-z]+$' }, STRING, []),
  field('format added', STRING, { ...STRING, format: 'date-time' }, 'pattern-tightened'),
  field(
    'CEL rule added',
    INT,
    { ...INT, 'x-kubernetes-validations': [{ rule: 'self <= 10', message: 'at most 10' }] },
    'cel-rule-added',
  ),
  field(
    'CEL rule message changed',
    { ...INT, 'x-kubernetes-validations': [{ rule: 'self <= 10', message: 'at most 10' }] },
    { ...INT, 'x-kubernetes-validations': [{ rule: 'self <= 10', message: 'ten at most' }] },
    [],
  ),
  field('CEL rule removed', { ...INT, 'x-kubernetes-validations': [{ rule: 'self <= 10' }] }, INT, []),
  field('default changed', { ...INT, default: 1 }, { ...INT, default: 2 }, 'default-changed'),
  field('default removed', { ...INT, default: 1 }, INT, 'default-changed'),
  field('default added', INT, { ...INT, default: 1 }, []),
  field(
    'list type atomic made map',
    { type: 'array', items: { type: 'object', properties: { name: STRING }, required: ['name'] } },
    {
      type: 'array',
      items: { type: 'object', properties: { name: STRING }, required: ['name'] },
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
    },
    'list-type-changed',
  ),
  field(
    'list type atomic written out',
    { type: 'array', items: STRING },
    { type: 'array', items: STRING, 'x-kubernetes-list-type': 'atomic' },
    [],
  ),
  field(
    'map type made atomic',
    { type: 'object', additionalProperties: STRING },
    { type: 'object', additionalProperties: STRING, 'x-kubernetes-map-type': 'atomic' },
    'list-type-changed',
  ),
  field('nullable removed', { ...STRING, nullable: true }, STRING, 'nullable-removed'),
  field('nullable added', STRING, { ...STRING, nullable: true }, []),
  field(
    'unknown fields no longer preserved',
    { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    { type: 'object', properties: { value: INT } },
    'unknown-fields-pruned',
  ),
  {
    name: 'scope changed',
    old: widgetCrd([{ name: 'v1', spec: { size: INT } }]),
    new: widgetCrd([{ name: 'v1', spec: { size: INT } }], { scope: 'Cluster' }),
    expected: ['scope-changed spec.scope'],
  },
  {
    name: 'version no longer served',
    old: widgetCrd([
      { name: 'v1', spec: { size: INT } },
      { name: 'v1beta1', spec: { size: INT } },
    ]),
    new: widgetCrd([
      { name: 'v1', spec: { size: INT } },
      { name: 'v1beta1', spec: { size: INT }, served: false },
    ]),
    expected: ['served-version-removed spec.versions[v1beta1]'],
  },
  {
    name: 'deprecated version removed after the migration',
    old: widgetCrd(
      [
        { name: 'v1', spec: { size: INT } },
        { name: 'v1beta1', spec: { size: INT }, deprecated: true },
      ],
      { storedVersions: ['v1'] },
    ),
    new: widgetCrd([{ name: 'v1', spec: { size: INT } }]),
    expected: [],
  },
  {
    name: 'version removed, stored versions unknown',
    old: widgetCrd([
      { name: 'v1', spec: { size: INT } },
      { name: 'v1beta1', spec: { size: INT }, deprecated: true },
    ]),
    new: widgetCrd([{ name: 'v1', spec: { size: INT } }]),
    expected: ['stored-version-removed spec.versions[v1beta1]'],
  },
  {
    name: 'version removed while stored',
    old: widgetCrd(
      [
        { name: 'v1', spec: { size: INT } },
        { name: 'v1beta1', spec: { size: INT }, deprecated: true },
      ],
      { storedVersions: ['v1beta1', 'v1'] },
    ),
    new: widgetCrd([{ name: 'v1', spec: { size: INT } }]),
    expected: ['stored-version-removed spec.versions[v1beta1]'],
  },
  {
    name: 'new storage version without a conversion',
    old: widgetCrd([{ name: 'v1beta1', spec: { size: INT } }]),
    new: widgetCrd([
      { name: 'v1', spec: { replicas: INT }, storage: true },
      { name: 'v1beta1', spec: { size: INT } },
    ]),
    expected: ['conversion-missing spec.conversion'],
  },
  {
    name: 'new storage version with a conversion',
    old: widgetCrd([{ name: 'v1beta1', spec: { size: INT } }]),
    new: widgetCrd(
      [
        { name: 'v1', spec: { replicas: INT }, storage: true },
        { name: 'v1beta1', spec: { size: INT } },
      ],
      { conversion: 'Webhook' },
    ),
    expected: [],
  },
  {
    name: 'new version of the same schema without a conversion',
    old: widgetCrd([{ name: 'v1beta1', spec: { size: INT } }]),
    new: widgetCrd([
      { name: 'v1', spec: { size: { ...INT, description: 'the size' } }, storage: true },
      { name: 'v1beta1', spec: { size: INT } },
    ]),
    expected: [],
  },
  {
    name: 'new version of the same shape, a tighter limit, without a conversion',
    old: widgetCrd([{ name: 'v1beta1', spec: { size: INT } }]),
    new: widgetCrd([
      { name: 'v1', spec: { size: { ...INT, maximum: 10 } }, storage: true },
      { name: 'v1beta1', spec: { size: INT } },
    ]),
    expected: ['limit-tightened .spec.size'],
  },
  {
    name: 'status subresource added',
    old: v1({ size: INT }),
    new: v1({ size: INT }, { status: true }),
    expected: ['subresource-changed spec.versions[v1].subresources.status'],
  },
];
