import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { widgetCrd } from '../../test-support/crd-compatibility-cases.js';
import { readCompatibilityAllowances } from './allowances.js';
import { readComparedCrd } from './compared-crd.js';
import { checkCrdCompatibility } from './crd-compatibility.js';

const INT = { type: 'integer' };
const before = readComparedCrd(widgetCrd([{ name: 'v1', spec: { size: INT, mode: { type: 'string' } } }]), 'old.yaml');
const after = readComparedCrd(widgetCrd([{ name: 'v1', spec: { size: { type: 'string' } } }]), 'new.yaml');

describe('allowances', () => {
  it('reads rule, path, reason, and optionally the CRD and version', () => {
    assert.deepEqual(
      readCompatibilityAllowances(
        {
          allow: [
            { rule: 'field-removed', path: '.spec.mode', reason: ' never read since 0.3 ' },
            {
              rule: 'type-changed',
              path: '.spec.size',
              crd: 'widgets.example.com',
              version: 'v1',
              reason: 'no object sets it',
            },
          ],
        },
        'crd-compat.yaml',
      ),
      [
        { rule: 'field-removed', path: '.spec.mode', reason: 'never read since 0.3' },
        {
          rule: 'type-changed',
          path: '.spec.size',
          crd: 'widgets.example.com',
          version: 'v1',
          reason: 'no object sets it',
        },
      ],
    );
    assert.deepEqual(readCompatibilityAllowances(null, 'crd-compat.yaml'), []);
    assert.deepEqual(readCompatibilityAllowances({ allow: null }, 'crd-compat.yaml'), []);
  });

  it('refuses an entry it cannot match, saying which and why', () => {
    const refused = (value: unknown, message: RegExp) =>
      assert.throws(() => readCompatibilityAllowances(value, 'crd-compat.yaml'), message);
    refused([], /crd-compat\.yaml: write the allowances as a list under "allow:" and nothing else/);
    refused({ allow: [], extra: 1 }, /under "allow:" and nothing else/);
    refused({ allow: {} }, /"allow" is not a list/);
    refused({ allow: ['field-removed'] }, /allow\[0\] is not a mapping of rule, path and reason/);
    refused(
      { allow: [{ rule: 'field-gone', path: '.spec.a', reason: 'x' }] },
      /allow\[0\]: "field-gone" is no rule of the check: one of crd-removed, scope-changed/,
    );
    refused(
      { allow: [{ rule: 'field-removed', path: '.spec.a' }] },
      /allow\[0\]: reason is required: say why the change is safe/,
    );
    refused({ allow: [{ rule: 'field-removed', reason: 'x' }] }, /allow\[0\]: path is required/);
    refused(
      { allow: [{ rule: 'field-removed', path: '.spec.a', reason: 'x', paths: [] }] },
      /allow\[0\]: unknown key paths/,
    );
    refused({ allow: [{ rule: 'field-removed', path: '.spec.a', reason: 'x', crd: '' }] }, /allow\[0\]: crd is empty/);
  });

  it('moves what they cover apart with their reason, and notes those that matched nothing', () => {
    const allowances = readCompatibilityAllowances(
      {
        allow: [
          { rule: 'field-removed', path: '.spec.mode', reason: 'never read' },
          // Another CRD's, another version's, another rule's: none covers the type change.
          { rule: 'type-changed', path: '.spec.size', crd: 'gadgets.example.com', reason: 'x' },
          { rule: 'type-changed', path: '.spec.size', version: 'v2', reason: 'x' },
          { rule: 'limit-tightened', path: '.spec.size', reason: 'x' },
        ],
      },
      'crd-compat.yaml',
    );
    const report = checkCrdCompatibility([before], [after], { allowances });
    assert.deepEqual(
      report.breaking.map((f) => `${f.rule} ${f.path}`),
      ['type-changed .spec.size'],
    );
    assert.deepEqual(
      report.allowed.map((f) => `${f.rule} ${f.path}: ${f.reason}`),
      ['field-removed .spec.mode: never read'],
    );
    assert.deepEqual(report.notes, [
      'the allowance of type-changed at .spec.size in gadgets.example.com matched no change: remove it',
      'the allowance of type-changed at .spec.size v2 matched no change: remove it',
      'the allowance of limit-tightened at .spec.size matched no change: remove it',
    ]);
  });
});
