// docs/FIRST-OPERATOR.md quotes this sample. The sample is what the tests run, so the page
// must say what the sample does: each decorator the page shows is one the sample has.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const page = readFileSync(join(root, '../../docs/FIRST-OPERATOR.md'), 'utf8');
const sources = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
  .map((file) => readFileSync(join(root, 'src', file), 'utf8'))
  .join('\n');

const DECORATORS =
  /@(Field|ConditionsField|Controller|Watches|Webhook|Finalizer|Reconcile|ValidateCreate|ValidateUpdate)\(/g;

/** Each decorator call in the text, its arguments whole, without whitespace or trailing commas. */
function decorators(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(DECORATORS)) {
    let depth = 0;
    let end = match.index + match[0].length - 1;
    for (; end < text.length; end++) {
      if (text[end] === '(') depth++;
      else if (text[end] === ')' && --depth === 0) break;
    }
    found.push(
      text
        .slice(match.index, end + 1)
        .replace(/\s+/g, '')
        .replace(/,([)}\]])/g, '$1'),
    );
  }
  return found;
}

describe('docs/FIRST-OPERATOR.md', () => {
  const typescript = [...page.matchAll(/```ts\n([\s\S]*?)```/g)].map((block) => block[1]!).join('\n');

  it('shows only decorators the sample has, as the sample writes them', () => {
    const inSample = new Set(decorators(sources));
    const shown = decorators(typescript);
    assert.ok(shown.length >= 20, `the page shows ${shown.length} decorators`);
    assert.deepEqual(
      shown.filter((d) => !inSample.has(d)),
      [],
    );
  });

  it('names files the sample has', () => {
    const named = new Set(
      [...page.matchAll(/`(cache-cluster[\w.-]*\.ts|cache-directory\.ts|backups\.ts)`/g)].map((m) => m[1]!),
    );
    const files = new Set(
      readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' }).map((f) => f.split('/').pop()),
    );
    const spec = /\.(spec|e2e-spec)\.ts$/; // the Vitest names of the tests, in a Nest app
    assert.deepEqual(
      [...named].filter((file) => !files.has(file) && !spec.test(file)),
      [],
    );
  });
});
