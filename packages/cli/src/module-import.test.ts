import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { importModuleFile, ModuleSyntaxError } from './module-import.js';

const here = dirname(fileURLToPath(import.meta.url));
const work = await mkdtemp(join(tmpdir(), 'nestor-import-'));
after(() => rm(work, { recursive: true, force: true }));

describe('importModuleFile', () => {
  it('gives up on a module whose top-level await never settles, saying what to do', async () => {
    await assert.rejects(
      importModuleFile(join(here, 'fixtures', 'hanging-app.module.js'), { timeoutMs: 200 }),
      /hanging-app\.module\.js did not finish importing within 0\.2 s: .* awaits something at its top level/,
    );
  });

  it('names the file and line a module threw from while imported', async () => {
    const file = join(work, 'throws.mjs');
    await writeFile(file, "export const a = 1;\n\nJSON.parse('{');\n");
    await assert.rejects(
      importModuleFile(file),
      (error: unknown) =>
        error instanceof ModuleSyntaxError && error.message.startsWith(`${file}:3:6: SyntaxError: Expected property`),
    );
    const typeError = join(work, 'type-error.mjs');
    await writeFile(typeError, 'const config = undefined;\nexport const port = config.port;\n');
    await assert.rejects(importModuleFile(typeError), (error: unknown) =>
      new RegExp(`reading 'port'\\) \\(thrown at ${typeError}:2:\\d+ while importing the module\\)$`).test(
        (error as Error).message,
      ),
    );
  });

  it('names the file, line and column of a syntax error in a file the module imports', async () => {
    await writeFile(join(work, 'root.mjs'), "import './ok.mjs';\nimport './bad.mjs';\n");
    await writeFile(join(work, 'ok.mjs'), 'export const ok = 1;\n');
    await writeFile(join(work, 'bad.mjs'), 'export const x = {\n  a: 1\n  b: 2,\n};\n');
    await assert.rejects(
      importModuleFile(join(work, 'root.mjs')),
      (error: unknown) =>
        error instanceof ModuleSyntaxError &&
        error.location === `${join(work, 'bad.mjs')}:3:3` &&
        error.message.includes('\n    b: 2,\n    ^'),
    );
  });
});
