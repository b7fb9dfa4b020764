import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigMap, Secret } from '../client/kinds.js';
import { CustomResource } from '../crd/custom-resource.decorator.js';
import { cacheSettings } from './cache-settings.js';

@CustomResource({ group: 'example.com', version: 'v1', kind: 'Gizmo' })
class Gizmo {}

describe('cacheSettings', () => {
  const drop = <T>(object: T) => object;

  it('keeps the module-wide settings, and each kind’s by its resource name', () => {
    const settings = cacheSettings({
      transform: drop,
      resyncPeriodMs: 60_000,
      byKind: [
        { kind: Secret, transform: drop },
        { kind: Gizmo, resyncPeriodMs: 0 },
      ],
    });
    assert.deepEqual(settings.defaults, { transform: drop, resyncMs: 60_000 });
    assert.deepEqual(
      [...settings.byResource],
      [
        ['secrets', { transform: drop }],
        ['gizmos.example.com', { resyncMs: 0 }],
      ],
    );
  });

  it('has nothing to add without a cache option', () => {
    assert.deepEqual(cacheSettings(), { defaults: {}, byResource: new Map(), keeps: { byResource: new Map() } });
  });

  it('keeps what owned and watched kinds keep: module-wide, and per kind', () => {
    const settings = cacheSettings({ keep: 'objects', byKind: [{ kind: Secret, keep: 'none' }, { kind: Gizmo }] });
    assert.equal(settings.keeps.all, 'objects');
    assert.deepEqual([...(settings.keeps.byResource ?? [])], [['secrets', 'none']]);
    assert.deepEqual(
      [...settings.byResource],
      [
        ['secrets', {}],
        ['gizmos.example.com', {}],
      ],
    );
  });

  it('refuses a kind listed twice, a class that is not a kind, and bad values, saying where', () => {
    assert.throws(
      () => cacheSettings({ byKind: [{ kind: ConfigMap }, { kind: ConfigMap, resyncPeriodMs: 5 }] }),
      /cache\.byKind\[1\]: configmaps is listed twice in cache\.byKind/,
    );
    class NotAKind {}
    assert.throws(() => cacheSettings({ byKind: [{ kind: NotAKind }] }), /NotAKind is not a kind/);
    assert.throws(
      () => cacheSettings({ byKind: [{ kind: Secret, resyncPeriodMs: -1 }] }),
      /cache\.byKind\[0\] \(secrets\)\.resyncPeriodMs must be a number of milliseconds greater than 0, got -1/,
    );
    assert.throws(() => cacheSettings({ transform: 'drop' as never }), /cache\.transform must be a function/);
    assert.throws(
      () => cacheSettings({ byKind: [{ kind: Secret, keep: 'all' as never }] }),
      /cache\.byKind\[0\]\.keep \(secrets\) must be 'objects', 'metadata' or 'none' \(or left out: cached from its first read\), got "all"/,
    );
    assert.throws(() => cacheSettings({ keep: true as never }), /cache\.keep must be 'objects', 'metadata' or 'none'/);
  });
});
