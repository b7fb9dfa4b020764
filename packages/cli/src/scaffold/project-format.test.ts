// init and create api format what they write with the project's own Prettier and its
// configuration (the Nest starter's .prettierrc: single quotes, trailing commas, 80 columns),
// and leave a file of the user's that was not formatted as it was, but for their edit.
import assert from 'node:assert/strict';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import { createApiCommand } from './create-api-command.js';
import { initCommand } from './init-command.js';

const here = dirname(fileURLToPath(import.meta.url));
const fixtures = resolve(here, '..', '..', 'fixtures');
const repoPrettier = resolve(here, '..', '..', '..', '..', 'node_modules', 'prettier');
const copies: string[] = [];

after(async () => {
  for (const copy of copies) await rm(copy, { recursive: true, force: true });
});

/** A copy of the Nest 11 starter with Prettier installed (a link to this repository's). */
async function starterWithPrettier(): Promise<string> {
  const app = await mkdtemp(join(tmpdir(), 'nestor-format-'));
  copies.push(app);
  await cp(join(fixtures, 'nest11-app'), app, { recursive: true });
  await mkdir(join(app, 'node_modules'));
  await symlink(repoPrettier, join(app, 'node_modules', 'prettier'), 'dir');
  return app;
}

const io = (app: string) => ({ cwd: app, stdout: () => {}, stderr: () => {} });

async function formatted(app: string, path: string): Promise<boolean> {
  const options = { ...(await prettier.resolveConfig(join(app, path))), filepath: join(app, path) };
  return prettier.check(await readFile(join(app, path), 'utf8'), options);
}

describe('scaffolding formatted by the project’s Prettier', () => {
  it('writes files the starter’s Prettier finds formatted, and a second run changes nothing', async () => {
    const app = await starterWithPrettier();
    assert.equal(await initCommand([], io(app)), 0);
    const args = ['--group', 'legacy.nestor.dev', '--version', 'v1', '--kind', 'VeryLongGadgetKindName'];
    assert.equal(await createApiCommand(args, io(app)), 0);
    const written = [
      'src/app.module.ts',
      'src/main.ts',
      'src/very-long-gadget-kind-name/very-long-gadget-kind-name.resource.ts',
      'src/very-long-gadget-kind-name/very-long-gadget-kind-name.controller.ts',
      'src/very-long-gadget-kind-name/very-long-gadget-kind-name.module.ts',
      'test/app.e2e-spec.ts',
      'test/very-long-gadget-kind-name.e2e-spec.ts',
    ];
    for (const path of written) assert.ok(await formatted(app, path), `${path} is not formatted`);
    let out = '';
    const again = { cwd: app, stdout: (text: string) => (out += text), stderr: (text: string) => (out += text) };
    assert.equal(await createApiCommand(args, again), 0);
    assert.match(out, /already there; nothing to change/);
  });

  it('edits a file of the user’s that Prettier would change without reformatting the rest of it', async () => {
    const app = await starterWithPrettier();
    const path = join(app, 'src', 'app.module.ts');
    const unformatted = (await readFile(path, 'utf8')).replace(
      "import { AppService } from './app.service';",
      'import {AppService} from "./app.service"',
    );
    await writeFile(path, unformatted);
    assert.equal(await initCommand([], io(app)), 0);
    const edited = await readFile(path, 'utf8');
    assert.match(edited, /import \{AppService\} from "\.\/app\.service"/);
    assert.match(edited, /imports: \[OperatorModule\.forRoot\(\)\]/);
  });
});
