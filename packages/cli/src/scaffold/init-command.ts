// `nestor init`: turns a Nest application into an operator project, as kubebuilder's `init`:
// OperatorModule in the root module, the packages, the e2e runner's global setup, the
// manifests script, an operator's main.ts, and a container image definition.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { CommandIo } from '../command-io.js';
import { addModuleImport } from './app-module-edit.js';
import { DOCKERFILE, DOCKERIGNORE } from './container-templates.js';
import { apply, effective, packageJsonText, type FileChange } from './file-changes.js';
import { NotANestProject, readNestProject, type NestProject, type PackageJson } from './nest-project.js';
import { nestorVersion } from './nestor-version.js';
import { operatorMainChange } from './operator-main.js';
import { formatLikeProject } from './project-format.js';
import { isEsmJestConfig, jestE2eScript, jestEsmScript, jestUnitConfig, runnerSetupChange } from './runner-setup.js';
import { starterE2eChange } from './starter-e2e-test.js';

export const INIT_USAGE = `Usage: nestor init [--dir <path>]

Makes a Nest application (\`nest new\`) an operator project:
  src/app.module.ts    imports OperatorModule.forRoot() (its settings come from the
                       kubebuilder flags and their environment variables at run time)
  src/main.ts          the starter's HTTP app replaced by an operator's: an application
                       context (no HTTP listener), operatorLogger() (JSON lines off a
                       terminal), app.enableShutdownHooks() (on SIGTERM running reconciles
                       finish, the leader Lease is released); a main.ts of your own is
                       kept, with a note on what it lacks
  package.json         @nestor/operator; @nestor/testing and @nestor/cli for development;
                       the script "manifests" (nestor manifests --out deploy)
  the e2e config       @nestor/testing's global setup: one real kube-apiserver and etcd
                       per test run (vitest.config.e2e.ts, or test/jest-e2e.json), and
                       timeouts for tests that wait on the cluster
  test/app.e2e-spec.ts the starter's test boots AppModule, which now starts the operator:
                       rewritten to run it on the test control plane in a namespace of its
                       own, webhook, metrics and probe servers off (a changed file is kept,
                       with a note on what to change)
  Dockerfile           multi-stage: built on node:24, run on distroless Node 24 as non-root
  .dockerignore

Nothing is written unless every change can be made; running it again changes nothing.
Then add a kind: nestor create api --group <group> --version <version> --kind <Kind>

Options:
  --dir <path>   the application's folder (default: the current one)
  -h, --help     show this help`;

export async function initCommand(argv: string[], io: CommandIo): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { dir: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    }));
  } catch (error) {
    io.stderr(`nestor init: ${(error as Error).message}\n\n${INIT_USAGE}\n`);
    return 2;
  }
  if (values.help) {
    io.stdout(`${INIT_USAGE}\n`);
    return 0;
  }
  const root = join(io.cwd, values.dir ?? '.');
  let project: NestProject;
  try {
    project = readNestProject(root);
  } catch (error) {
    if (error instanceof NotANestProject) {
      io.stderr(`nestor init: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
  const planned: FileChange[] = [];
  const problems: string[] = [];

  const moduleSource = readFileSync(project.appModule, 'utf8');
  const moduleEdit = addModuleImport(
    moduleSource,
    "import { OperatorModule } from '@nestor/operator';",
    'OperatorModule.forRoot()',
    /\bOperatorModule\b/,
  );
  if ('error' in moduleEdit) {
    problems.push(
      `src/app.module.ts: ${moduleEdit.error}. Add it by hand:\n` +
        "    import { OperatorModule } from '@nestor/operator';\n" +
        '    @Module({ imports: [OperatorModule.forRoot()], ... })',
    );
  } else {
    planned.push({ path: project.appModule, content: moduleEdit.source, what: 'imports OperatorModule.forRoot()' });
  }

  const notes: string[] = [];
  const main = operatorMainChange(project);
  if (main.change) planned.push(main.change);
  if (main.note) notes.push(main.note);

  planned.push({
    path: join(root, 'package.json'),
    content: packageJsonText(withNestor(project, nestorVersion(), notes)),
    what: '@nestor/operator, @nestor/testing, @nestor/cli; the "manifests" script',
  });

  const setup = runnerSetupChange(project);
  if ('error' in setup) problems.push(setup.error);
  else if (setup.change) planned.push(setup.change);

  const starter = starterE2eChange(project);
  if (starter.change) planned.push(starter.change);
  if (starter.note) notes.push(starter.note);

  for (const [name, content] of [
    ['Dockerfile', DOCKERFILE],
    ['.dockerignore', DOCKERIGNORE],
  ] as const) {
    const path = join(root, name);
    if (!existsSync(path))
      planned.push({ path, content, what: name === 'Dockerfile' ? 'the operator image' : 'the image build context' });
    else if (readFileSync(path, 'utf8') !== content) notes.push(`${name} exists: kept as it is`);
  }

  if (problems.length > 0) {
    io.stderr(`nestor init: nothing was changed:\n${problems.map((p) => `  ${p}`).join('\n')}\n`);
    return 1;
  }
  // The starter's main.ts and e2e test are replaced whole: formatted whatever they were.
  const replaced = new Set([main.change?.path, starter.change?.path]);
  const changes = effective(await formatLikeProject(root, planned, (change) => replaced.has(change.path)));
  if (changes.length === 0) {
    io.stdout(`nestor init: ${root} is already set up; nothing to change.\n`);
  } else {
    io.stdout(`nestor init: ${root}\n${apply(root, changes).join('\n')}\n`);
    io.stdout('Next: npm install, then nestor create api --group <group> --version <version> --kind <Kind>\n');
  }
  for (const note of notes) io.stdout(`note: ${note}\n`);
  return 0;
}

/** package.json with Nestor's packages and the manifests script; what the user set is kept. */
function withNestor(project: NestProject, version: string, notes: string[]): PackageJson {
  const manifest = project.packageJson;
  const range = `^${version}`;
  const scripts: Record<string, string> = {
    manifests: 'nestor manifests --module dist/app.module.js --out deploy',
    ...manifest.scripts,
  };
  let jest: unknown = manifest['jest'];
  if (project.runner === 'jest') {
    const e2e = jestE2eScript(scripts['test:e2e']);
    if (e2e) scripts['test:e2e'] = e2e;
    // The unit tests as ES modules too: the scripts that run Jest, and its configuration.
    const unit = jestUnitConfig(project.root, jest);
    if (unit.note) notes.push(unit.note);
    if (unit.config) jest = unit.config;
    for (const name of isEsmJestConfig(jest) ? ['test', 'test:watch', 'test:cov', 'test:debug'] : []) {
      const script = scripts[name] === undefined ? undefined : jestEsmScript(scripts[name]);
      if (script) scripts[name] = script;
    }
  }
  // A package the project already lists, in any section, keeps its range and its section.
  const listed = new Set(DEPENDENCY_SECTIONS.flatMap((section) => Object.keys(manifest[section] ?? {})));
  const missing = (names: string[]) => Object.fromEntries(names.filter((n) => !listed.has(n)).map((n) => [n, range]));
  return {
    ...manifest,
    scripts,
    ...(jest === undefined ? {} : { jest }),
    dependencies: sorted({ ...missing(['@nestor/operator']), ...manifest.dependencies }),
    devDependencies: sorted({ ...missing(['@nestor/cli', '@nestor/testing']), ...manifest.devDependencies }),
  } satisfies PackageJson;
}

const DEPENDENCY_SECTIONS = ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'] as const;

/** The section sorted by name, as npm writes it; none when it would be empty. */
function sorted(record: Record<string, string>): Record<string, string> | undefined {
  if (Object.keys(record).length === 0) return undefined;
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}
