import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CustomResource } from '../crd/custom-resource.decorator.js';
import { storageVersionOf } from '../crd/storage-version.js';
import { warnNonStorageVersions } from './storage-version-warnings.js';

@CustomResource({ group: 'storage.nestor.dev', version: 'v1alpha1', kind: 'Vat', storage: false })
class VatV1alpha1 {}
@CustomResource({ group: 'storage.nestor.dev', version: 'v1', kind: 'Vat' })
class Vat {}
@CustomResource({ group: 'storage.nestor.dev', version: 'v1', kind: 'Lid' })
class Lid {}
@CustomResource({ group: 'storage.nestor.dev', version: 'v1beta1', kind: 'Tap', storage: true })
class TapV1beta1 {}
@CustomResource({ group: 'storage.nestor.dev', version: 'v1', kind: 'Tap' })
class Tap {}

describe('storage versions', () => {
  it('finds the version a kind is stored at, as the CRD generator does', () => {
    assert.equal(storageVersionOf(VatV1alpha1), 'v1', 'the only one not marked storage: false');
    assert.equal(storageVersionOf(Lid), 'v1', 'a kind of one version');
    assert.equal(storageVersionOf(Tap), 'v1beta1', 'marked storage: true');
  });

  it('warns once per controller and kind reconciled or owned at another version, naming managedFields and /convert', () => {
    const messages: string[] = [];
    const seen = new Set<string>();
    const controller = {
      className: 'VatController',
      resource: VatV1alpha1,
      options: { owns: [Lid, { resource: Tap }] },
    };
    warnNonStorageVersions(controller, (m) => messages.push(m), seen);
    warnNonStorageVersions(controller, (m) => messages.push(m), seen);
    assert.equal(messages.length, 2, messages.join('\n'));
    assert.match(
      messages[0]!,
      /^VatController reconciles Vat at v1alpha1 \(VatV1alpha1\), but vats.storage.nestor.dev is stored at v1: its writes leave managedFields entries of v1alpha1, so every later write .* goes through the conversion webhook \(\/convert\)/,
    );
    assert.match(
      messages[1]!,
      /^VatController owns Tap at v1 \(Tap\), but taps.storage.nestor.dev is stored at v1beta1/,
    );

    const quiet: string[] = [];
    warnNonStorageVersions(
      { className: 'C', resource: Vat, options: { owns: [TapV1beta1] } },
      (m) => quiet.push(m),
      seen,
    );
    assert.deepEqual(quiet, [], 'the storage versions: nothing to say');
  });
});
