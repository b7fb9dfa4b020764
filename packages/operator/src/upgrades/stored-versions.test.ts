import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  storageMigrationPlan,
  trimStoredVersionsPatch,
  whyNotTrim,
  type CustomResourceDefinitionObject,
} from './stored-versions.js';

function crd(
  versions: Array<[name: string, served: boolean, storage: boolean]>,
  storedVersions: string[],
  scope: 'Namespaced' | 'Cluster' = 'Namespaced',
): CustomResourceDefinitionObject {
  return {
    metadata: { name: 'widgets.example.com', resourceVersion: '42' },
    spec: {
      group: 'example.com',
      scope,
      names: { plural: 'widgets', kind: 'Widget' },
      versions: versions.map(([name, served, storage]) => ({ name, served, storage })),
    },
    status: { storedVersions, acceptedNames: { plural: 'widgets', kind: 'Widget' } },
  };
}

describe('storageMigrationPlan', () => {
  it('plans nothing when storedVersions lists the storage version alone', () => {
    assert.equal(
      storageMigrationPlan(
        crd(
          [
            ['v1beta1', true, false],
            ['v1', true, true],
          ],
          ['v1'],
        ),
      ),
      undefined,
    );
  });

  it('plans a rewrite in the storage version, through it when served', () => {
    const plan = storageMigrationPlan(
      crd(
        [
          ['v1beta1', true, false],
          ['v1', true, true],
        ],
        ['v1beta1', 'v1'],
      ),
    );
    assert.deepEqual(plan, {
      crd: 'widgets.example.com',
      storage: 'v1',
      stale: ['v1beta1'],
      storedVersions: ['v1beta1', 'v1'],
      resource: { group: 'example.com', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true },
    });
  });

  it('reads and writes through a served version when the storage version is not served', () => {
    const plan = storageMigrationPlan(
      crd(
        [
          ['v1beta1', true, false],
          ['v1', false, true],
        ],
        ['v1beta1', 'v1'],
        'Cluster',
      ),
    );
    assert.equal(plan?.resource.version, 'v1beta1');
    assert.equal(plan?.resource.namespaced, false);
  });

  it('says why a CRD cannot be migrated', () => {
    assert.throws(() => storageMigrationPlan(crd([['v1', false, true]], ['v1beta1', 'v1'])), /serves no version/);
    assert.throws(() => storageMigrationPlan(crd([['v1', true, false]], ['v1'])), /no version storage: true/);
  });
});

describe('whyNotTrim and the trim', () => {
  const plan = storageMigrationPlan(
    crd(
      [
        ['v1beta1', true, false],
        ['v1', true, true],
      ],
      ['v1beta1', 'v1'],
    ),
  )!;

  it('trims when the CRD is as planned, guarded by its resourceVersion', () => {
    assert.equal(
      whyNotTrim(
        plan,
        crd(
          [
            ['v1beta1', true, false],
            ['v1', true, true],
          ],
          ['v1beta1', 'v1'],
        ),
      ),
      undefined,
    );
    assert.deepEqual(trimStoredVersionsPatch(plan, '42'), {
      metadata: { resourceVersion: '42' },
      status: { storedVersions: ['v1'] },
    });
  });

  it('refuses when the storage version changed, or a version was stored meanwhile', () => {
    assert.match(
      whyNotTrim(
        plan,
        crd(
          [
            ['v1', true, false],
            ['v2', true, true],
          ],
          ['v1beta1', 'v1', 'v2'],
        ),
      )!,
      /changed from v1 to v2/,
    );
    assert.match(
      whyNotTrim(
        plan,
        crd(
          [
            ['v1beta1', true, false],
            ['v1', true, true],
            ['v2', true, false],
          ],
          ['v1beta1', 'v1', 'v2'],
        ),
      )!,
      /v2 became a stored version/,
    );
  });
});
