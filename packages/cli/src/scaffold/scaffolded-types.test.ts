// Type tests over the kind `nestor create api` writes (src/fixtures/scaffolded, the template's
// output, kept equal to it below): its example field is Defaulted, as docs/custom-resources.md
// advises for a field with a schema default. tsc compiles this file in the build: a line
// that does not compile, or an `@ts-expect-error` line that does, fails it.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { AsWritten } from '@nestor/operator';
import type { Gadget } from '../fixtures/scaffolded/gadget.resource.js';
import { resourceSource } from './api-templates.js';

const src = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');

describe('the kind create api writes', () => {
  it('is the fixture, byte for byte', async () => {
    const names = { group: 'scaffold.nestor.dev', version: 'v1', kind: 'Gadget', plural: 'gadgets', file: 'gadget' };
    const fixture = await readFile(join(src, 'fixtures', 'scaffolded', 'gadget.resource.ts'), 'utf8');
    assert.equal(fixture, resourceSource(names));
  });

  it('reads its defaulted field as present, and lets a writer leave it out (checked by the compiler)', () => {
    const read = (gadget: Gadget): number => gadget.spec.replicas;
    const written: AsWritten<Gadget> = { metadata: { name: 'a' }, spec: {} };
    const two: AsWritten<Gadget> = { metadata: { name: 'b' }, spec: { replicas: 2 } };
    // @ts-expect-error replicas is a number, written or read
    const wrong: AsWritten<Gadget> = { metadata: { name: 'c' }, spec: { replicas: '2' } };
    assert.equal(typeof read, 'function');
    assert.ok(written && two && wrong);
  });
});
