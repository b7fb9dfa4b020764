import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { COMPATIBILITY_CASES, widgetCrd, type CrdObject } from '../../test-support/crd-compatibility-cases.js';
import { COMPATIBILITY_RULES } from './compatibility-rules.js';
import { CrdCompatibilityInputError, readComparedCrd } from './compared-crd.js';
import { checkCrdCompatibility, type CompatibilityCheckOptions } from './crd-compatibility.js';

function check(old: CrdObject[], now: CrdObject[], options: CompatibilityCheckOptions = {}) {
  return checkCrdCompatibility(
    old.map((crd, i) => readComparedCrd(crd, `old-${i}.yaml`)),
    now.map((crd, i) => readComparedCrd(crd, `new-${i}.yaml`)),
    options,
  );
}

const INT = { type: 'integer' };

describe('checkCrdCompatibility: each rule on its fixture', () => {
  for (const fixture of COMPATIBILITY_CASES) {
    it(`${fixture.name}: ${fixture.expected.join(', ') || 'compatible'}`, () => {
      const report = check([fixture.old], [fixture.new]);
      assert.deepEqual(report.breaking.map((f) => `${f.rule} ${f.path}`).sort(), [...fixture.expected].sort());
      assert.deepEqual(report.compared, ['widgets.example.com']);
    });
  }

  it('has a fixture that breaks every rule but crd-removed (tested below)', () => {
    const broken = new Set(COMPATIBILITY_CASES.flatMap((c) => c.expected.map((e) => e.split(' ')[0])));
    assert.deepEqual(
      COMPATIBILITY_RULES.filter((rule) => rule !== 'crd-removed' && !broken.has(rule)),
      [],
    );
  });

  it('says what changed, in which version, and what to do', () => {
    const report = check(
      [widgetCrd([{ name: 'v1', spec: { size: { ...INT, maximum: 10, default: 1 } } }])],
      [widgetCrd([{ name: 'v1', spec: { size: { type: 'string' } } }])],
    );
    // The type change says it all: the node's other keywords are not compared.
    assert.deepEqual(report.breaking, [
      {
        crd: 'widgets.example.com',
        version: 'v1',
        path: '.spec.size',
        rule: 'type-changed',
        change: 'type integer -> string',
        remedy:
          'stored values of the old type no longer validate, and typed clients break: keep the type and add a field of the new type beside it, or change it in a new version with a conversion',
      },
    ]);
    const tightened = check(
      [widgetCrd([{ name: 'v1', spec: { size: { ...INT, maximum: 10, enum: [1, 2, 3], default: 1 } } }])],
      [
        widgetCrd([
          { name: 'v1', spec: { size: { ...INT, maximum: 5, exclusiveMaximum: true, enum: [1, 3], default: 3 } } },
        ]),
      ],
    );
    assert.deepEqual(
      tightened.breaking.map((f) => f.change),
      ['enum values removed: 2', 'maximum 10 -> 5 (exclusive)', 'default 1 -> 3'],
    );
  });

  it('does not descend into a field whose type changed', () => {
    const report = check(
      [widgetCrd([{ name: 'v1', spec: { size: { type: 'object', properties: { a: INT, b: INT } } } }])],
      [widgetCrd([{ name: 'v1', spec: { size: { type: 'array', items: INT } } }])],
    );
    assert.deepEqual(
      report.breaking.map((f) => `${f.rule} ${f.path}`),
      ['type-changed .spec.size'],
    );
  });

  it('names fields that are not plain words, and the root', () => {
    const old = widgetCrd([{ name: 'v1', spec: { 'a.b': INT } }]);
    const now = widgetCrd([{ name: 'v1', spec: {} }]);
    const root = (crd: CrdObject) =>
      (crd.spec as { versions: Array<{ schema: { openAPIV3Schema: Record<string, unknown> } }> }).versions[0]!.schema
        .openAPIV3Schema;
    root(now)['x-kubernetes-validations'] = [{ rule: "self.metadata.name.startsWith('w')" }];
    assert.deepEqual(
      check([old], [now]).breaking.map((f) => `${f.rule} ${f.path}`),
      ['cel-rule-added .', "field-removed .spec['a.b']"],
    );
  });
});

describe('checkCrdCompatibility: versions and stored versions', () => {
  const twoVersions = widgetCrd([
    { name: 'v1', spec: { size: INT } },
    { name: 'v1beta1', spec: { size: INT }, deprecated: true },
  ]);
  const oneVersion = widgetCrd([{ name: 'v1', spec: { size: INT } }]);

  it('takes the stored versions given over the old CRD status, and says why a removal breaks', () => {
    const unknown = check([twoVersions], [oneVersion]);
    assert.deepEqual(
      unknown.breaking.map((f) => f.change),
      ["v1beta1 is removed and may still hold objects: the cluster's storedVersions were not given"],
    );
    const stored = check([twoVersions], [oneVersion], { storedVersions: { 'widgets.example.com': ['v1beta1', 'v1'] } });
    assert.deepEqual(
      stored.breaking.map((f) => f.change),
      ['v1beta1 is removed while status.storedVersions lists it (v1beta1, v1)'],
    );
    const migrated = check([twoVersions], [oneVersion], { storedVersions: { 'widgets.example.com': ['v1'] } });
    assert.deepEqual(migrated.breaking, []);
    assert.deepEqual(migrated.notes, [
      'widgets.example.com: v1beta1, deprecated, is removed: clients still using it get 404s',
    ]);
  });

  it('flags the removed storage version even without stored versions, and a stored version neither CRD has', () => {
    const report = check(
      [widgetCrd([{ name: 'v1beta1', spec: { size: INT } }])],
      [widgetCrd([{ name: 'v1', spec: { size: INT } }])],
    );
    assert.deepEqual(
      report.breaking.map((f) => `${f.rule} ${f.version}: ${f.change}`),
      [
        'stored-version-removed v1beta1: v1beta1, the storage version, is removed: objects are stored in it',
        'served-version-removed v1beta1: v1beta1 was served and is removed',
      ],
    );
    const ghost = check([oneVersion], [oneVersion], { storedVersions: { 'widgets.example.com': ['v1alpha1', 'v1'] } });
    assert.deepEqual(
      ghost.breaking.map((f) => f.change),
      ['status.storedVersions lists v1alpha1, which the CRD no longer has'],
    );
  });

  it('reports a missing conversion once per pair, and not when the old CRD already had it', () => {
    const before = widgetCrd([
      { name: 'v1', spec: { replicas: INT }, storage: true },
      { name: 'v1beta1', spec: { size: INT } },
    ]);
    const report = check([widgetCrd([{ name: 'v1beta1', spec: { size: INT } }])], [before]);
    assert.deepEqual(
      report.breaking.map((f) => `${f.version} ${f.change}`),
      [
        'v1 objects stored as v1 are served as v1beta1 with only their apiVersion changed, and the schemas differ at .spec.replicas',
      ],
    );
    // The same CRD again: the pair was there before, the previous release reported it.
    assert.deepEqual(check([before], [before]).breaking, []);
    // A conversion dropped: the pair breaks again.
    const converted = widgetCrd(
      [
        { name: 'v1', spec: { replicas: INT }, storage: true },
        { name: 'v1beta1', spec: { size: INT } },
      ],
      { conversion: 'Webhook' },
    );
    assert.deepEqual(
      check([converted], [before]).breaking.map((f) => f.rule),
      ['conversion-missing'],
    );
  });

  it('holds a new version of the same shape to the schema rules, for the objects it serves unconverted', () => {
    const report = check(
      [widgetCrd([{ name: 'v1beta1', spec: { size: INT } }])],
      [
        widgetCrd([
          { name: 'v1', spec: { size: { ...INT, maximum: 10 } }, storage: true },
          { name: 'v1beta1', spec: { size: INT } },
        ]),
      ],
    );
    // v1beta1's objects read as v1 meet its maximum; v1's read as v1beta1 meet none.
    assert.deepEqual(
      report.breaking.map((f) => `${f.rule} ${f.version} ${f.path}: ${f.change}`),
      [
        'limit-tightened v1 .spec.size: maximum added: 10, for objects stored as v1beta1 and served as v1 without conversion',
      ],
    );
  });

  it('reports a removed CRD and lists the added ones', () => {
    const gadgets = { ...oneVersion, metadata: { name: 'gadgets.example.com' } };
    const report = check([oneVersion], [gadgets]);
    assert.deepEqual(
      report.breaking.map((f) => `${f.crd} ${f.rule} ${f.path}`),
      ['widgets.example.com crd-removed metadata.name'],
    );
    assert.deepEqual(report.added, ['gadgets.example.com']);
    assert.deepEqual(report.compared, []);
  });
});

describe('checkCrdCompatibility: input it refuses', () => {
  const crd = widgetCrd([{ name: 'v1', spec: { size: INT } }]);

  it('refuses what is not a v1 CRD with one storage version, saying where', () => {
    assert.throws(
      () => readComparedCrd({ kind: 'ConfigMap' }, 'a.yaml'),
      /^CrdCompatibilityInputError: a\.yaml: not a CustomResourceDefinition$/,
    );
    assert.throws(
      () => readComparedCrd({ ...crd, apiVersion: 'apiextensions.k8s.io/v1beta1' }, 'a.yaml'),
      /a\.yaml: the CustomResourceDefinition widgets\.example\.com is apiextensions\.k8s\.io\/v1beta1; only apiextensions\.k8s\.io\/v1 is compared/,
    );
    const none = widgetCrd([
      { name: 'v1', spec: {}, storage: false },
      { name: 'v2', spec: {}, storage: false },
    ]);
    assert.throws(
      () => readComparedCrd(none, 'a.yaml'),
      /has 0 storage versions \(none\): exactly one must be storage: true/,
    );
    const noSchema = structuredClone(crd) as { spec: { versions: Array<Record<string, unknown>> } };
    delete noSchema.spec.versions[0]!.schema;
    assert.throws(
      () => readComparedCrd(noSchema, 'a.yaml'),
      /spec\.versions\[0\] \(v1\) has no schema\.openAPIV3Schema/,
    );
    assert.throws(
      () => readComparedCrd({ ...crd, status: { storedVersions: 'v1' } }, 'a.yaml'),
      /status\.storedVersions is not a list of version names/,
    );
  });

  it('names the CRD, the files and the field of a keyword it cannot read', () => {
    const bad = widgetCrd([{ name: 'v1', spec: { size: { ...INT, maximum: '10' } } }]);
    assert.throws(
      () => check([crd], [bad]),
      (error: unknown) =>
        error instanceof CrdCompatibilityInputError &&
        error.message === 'widgets.example.com (old-0.yaml -> new-0.yaml): .spec.size: maximum is not a number',
    );
  });

  it('refuses a CRD twice on one side, and stored versions of a CRD the previous ones lack', () => {
    assert.throws(
      () => check([crd, crd], [crd]),
      /the previous CRDs hold widgets\.example\.com twice \(old-0\.yaml, old-1\.yaml\)/,
    );
    assert.throws(
      () => check([crd], [crd], { storedVersions: { 'gadgets.example.com': ['v1'] } }),
      /stored versions are given for gadgets\.example\.com, which the previous CRDs do not hold \(widgets\.example\.com\)/,
    );
  });
});
