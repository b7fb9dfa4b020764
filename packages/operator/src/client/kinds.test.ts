import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { apiVersionOf, type ResourceDescriptor } from '@nestor/core';
import * as kinds from './kinds.js';

const DOC = new URL('../../../../docs/reconcilers.md', import.meta.url);

/** Each exported descriptor by its export name. */
const descriptors = Object.entries(kinds as Record<string, unknown>).filter(
  (entry): entry is [string, ResourceDescriptor] =>
    typeof entry[1] === 'object' && entry[1] !== null && 'plural' in entry[1] && 'kind' in entry[1],
);

describe('the built-in kinds', () => {
  it('are each listed in docs/reconcilers.md with apiVersion and scope, and nothing else is', () => {
    const rows = readFileSync(DOC, 'utf8')
      .split('\n')
      .map((line) => /^\| `(\w+)` \| `([\w./]+)` \| `(\w+)` \| (yes|no) \|$/.exec(line))
      .filter((match) => match !== null)
      .map(([, name, apiVersion, , namespaced]) => [name, apiVersion, namespaced === 'yes']);
    const exported = descriptors.map(([name, d]) => [name, apiVersionOf(d), d.namespaced]);
    assert.deepEqual(
      rows.sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      exported.sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
  });

  it('are those the client finds by apiVersion and kind (builtinKinds), but EventV1', () => {
    const known = new Set<unknown>(kinds.builtinKinds);
    assert.deepEqual(
      descriptors.filter(([, d]) => !known.has(d)).map(([name]) => name),
      ['EventV1'],
    );
  });
});
