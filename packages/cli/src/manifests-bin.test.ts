// The built `nestor` bin on applications that misbehave when imported: it exits once the
// manifests are out, keeps stdout for the YAML alone, and names the file and line of a
// syntax error. Each runs as a user would, in a process of its own.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { runCommand } from './test-support/run-command.js';

const here = dirname(fileURLToPath(import.meta.url));
const work = await mkdtemp(join(tmpdir(), 'nestor-bin-'));
after(() => rm(work, { recursive: true, force: true }));

/** `nestor manifests`, killed after 60 s: a run that needs longer has hung. */
function manifests(args: string[]) {
  return runCommand(process.execPath, [join(here, 'main.js'), 'manifests', ...args], work, { timeoutMs: 60_000 });
}

/** The kinds in a YAML stream; throws if it is not YAML alone. */
function kindsIn(stream: string): string[] {
  return parseAllDocuments(stream).map((document) => {
    assert.deepEqual(document.errors, [], 'stdout is a YAML stream');
    const object = document.toJS() as { kind?: unknown };
    assert.equal(typeof object.kind, 'string', `every document is an object: ${JSON.stringify(object)}`);
    return object.kind as string;
  });
}

describe('nestor manifests, run as a process', () => {
  it('exits once the manifests are written, whatever timers and servers the module started', async () => {
    const { code, stdout, output } = await manifests(['--module', join(here, 'fixtures', 'timer-app.module.js')]);
    assert.equal(code, 0, output);
    assert.ok(kindsIn(stdout).includes('Deployment'));
  });

  it("prints the YAML alone on stdout, and the module's logs on stderr", async () => {
    const { code, stdout, stderr, output } = await manifests([
      '--module',
      join(here, 'fixtures', 'noisy-app.module.js'),
    ]);
    assert.equal(code, 0, output);
    assert.doesNotMatch(stdout, /noisy/);
    assert.ok(kindsIn(stdout).includes('CustomResourceDefinition'));
    assert.match(stderr, /noisy: console\.log at import/);
    assert.match(stderr, /noisy: Logger\.log at import/);
  });

  it('names the file, line and column of a syntax error, in an ES module or a CommonJS one it imports', async () => {
    const app = join(work, 'broken-app');
    await mkdir(app);
    await writeFile(join(app, 'package.json'), '{ "type": "module" }\n');
    await writeFile(
      join(app, 'app.module.js'),
      "import './fine.js';\nimport './broken.js';\nexport class AppModule {}\n",
    );
    await writeFile(join(app, 'fine.js'), 'export const fine = 1;\n');
    await writeFile(join(app, 'broken.js'), 'export function f() {\n  return (1 + ;\n}\n');
    const esm = await manifests(['--module', join(app, 'app.module.js')]);
    assert.equal(esm.code, 1, esm.output);
    assert.match(
      esm.stderr,
      new RegExp(
        `nestor manifests: ${join(app, 'broken.js')}:2:15: SyntaxError: Unexpected token ';'\n    return \\(1 \\+ ;\n {16}\\^\n`,
      ),
    );

    await writeFile(join(app, 'cjs.module.js'), "import './broken.cjs';\nexport class AppModule {}\n");
    await writeFile(join(app, 'broken.cjs'), 'module.exports = {\n  a: 1,,\n};\n');
    const cjs = await manifests(['--module', join(app, 'cjs.module.js')]);
    assert.equal(cjs.code, 1, cjs.output);
    assert.match(cjs.stderr, new RegExp(`${join(app, 'broken.cjs')}:2:8: SyntaxError: Unexpected token ','`));
  });

  it('fails, naming the module, when the module exits the process while it is imported', async () => {
    const app = join(work, 'exiting-app');
    await mkdir(app);
    await writeFile(join(app, 'package.json'), '{ "type": "module" }\n');
    // What a main.ts imported by mistake does once its bootstrap is over, or a CLI library at import.
    await writeFile(join(app, 'app.module.js'), 'export class AppModule {}\nprocess.exit(0);\n');
    const { code, stdout, stderr, output } = await manifests(['--module', join(app, 'app.module.js')]);
    assert.equal(code, 1, output);
    assert.equal(stdout, '');
    assert.match(
      stderr,
      new RegExp(`nestor manifests: ${join(app, 'app.module.js')} called process.exit\\(0\\) while it was imported`),
    );
  });

  it('leaves the output folder as it was when a file cannot be written there, and says which and why', async () => {
    const out = join(work, 'deploy');
    const module = join(here, 'fixtures', 'app.module.js');
    const first = await manifests(['--module', module, '--out', out]);
    assert.equal(first.code, 0, first.output);
    // The earlier CRDs, marked, and a file where the operator's folder must be.
    const crds = `${await readFile(join(out, 'crds', 'crds.yaml'), 'utf8')}# from the earlier run\n`;
    await writeFile(join(out, 'crds', 'crds.yaml'), crds);
    await rm(join(out, 'operator'), { recursive: true });
    await writeFile(join(out, 'operator'), 'in the way\n');

    const { code, stderr, output } = await manifests(['--module', module, '--out', out, '--name', 'renamed']);
    assert.equal(code, 1, output);
    assert.match(
      stderr,
      new RegExp(
        `nestor manifests: cannot write ${out}/operator/\\S+\\.yaml: ${out}/operator is a file, where a folder must be; nothing in ${out} was changed`,
      ),
    );
    assert.equal(await readFile(join(out, 'crds', 'crds.yaml'), 'utf8'), crds);
    assert.doesNotMatch(await readFile(join(out, 'README.md'), 'utf8'), /renamed/);
  });
});
