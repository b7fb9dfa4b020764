// What npm would publish, package by package: `npm pack --dry-run` of each workspace
// package, checked for what a user of the published package relies on.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PACKAGES = ['core', 'operator', 'testing', 'cli'];

interface Packed {
  name: string;
  version: string;
  files: Array<{ path: string }>;
}

function pack(name: string): Packed {
  const result = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: join(root, 'packages', name),
    encoding: 'utf8',
  });
  assert.equal(result.status, 0, `npm pack failed for packages/${name}: ${result.stderr}`);
  return (JSON.parse(result.stdout) as Packed[])[0]!;
}

for (const name of PACKAGES) {
  describe(`@nestor/${name} as npm would publish it`, () => {
    const packed = pack(name);
    const files = new Set(packed.files.map((f) => f.path));
    const manifest = JSON.parse(readFileSync(join(root, 'packages', name, 'package.json'), 'utf8')) as Record<
      string,
      Record<string, string> | string
    >;

    it('carries its licence, a README and the entry points its exports name', () => {
      assert.equal(manifest['license'], 'Apache-2.0');
      for (const file of ['LICENSE', 'README.md', 'package.json']) assert.ok(files.has(file), `${file} is missing`);
      const entries = Object.values(manifest['exports'] as unknown as Record<string, Record<string, string>>);
      for (const entry of entries)
        for (const target of Object.values(entry))
          assert.ok(files.has(normalize(target)), `the export ${target} is not in the package`);
    });

    it('ships no tests, test helpers or fixtures', () => {
      const stray = [...files].filter((f) => /\.test\.|test-support\/|fixtures\//.test(f));
      assert.deepEqual(stray, []);
    });

    it('has source maps whose sources are in the package', () => {
      const maps = [...files].filter((f) => f.endsWith('.js.map'));
      assert.ok(maps.length > 0, 'no source maps');
      for (const map of maps) {
        const { sources } = JSON.parse(readFileSync(join(root, 'packages', name, map), 'utf8')) as {
          sources: string[];
        };
        for (const source of sources) {
          const path = normalize(join(dirname(map), source));
          assert.ok(files.has(path), `${map} points at ${path}, which is not in the package`);
        }
      }
    });

    it('depends on the other Nestor packages at their released version, not "*"', () => {
      for (const field of ['dependencies', 'peerDependencies']) {
        for (const [dependency, range] of Object.entries((manifest[field] as Record<string, string>) ?? {})) {
          if (!dependency.startsWith('@nestor/')) continue;
          const version = (
            JSON.parse(
              readFileSync(join(root, 'packages', dependency.slice('@nestor/'.length), 'package.json'), 'utf8'),
            ) as { version: string }
          ).version;
          assert.equal(range, version, `${field}.${dependency} is ${range}, not ${version}`);
        }
      }
    });
  });
}
