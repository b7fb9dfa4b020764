// `nestor create api`: a new kind, as kubebuilder's `create api`: the @CustomResource class,
// its controller and module (registered in the root module), and an e2e test for the app's
// runner. Existing files are never overwritten without --force.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { CommandIo } from '../command-io.js';
import { apiNames, InvalidApiName, type ApiNames } from './api-names.js';
import { controllerSource, e2eSource, moduleSource, resourceSource } from './api-templates.js';
import { addModuleImport } from './app-module-edit.js';
import { apply, effective, type FileChange } from './file-changes.js';
import { importPath, NotANestProject, readNestProject, type NestProject } from './nest-project.js';
import { formatLikeProject } from './project-format.js';

export const CREATE_API_USAGE = `Usage: nestor create api --group <group> --version <version> --kind <Kind> [options]

Adds a custom resource kind to the application:
  src/<kind>/<kind>.resource.ts     the @CustomResource class: spec, status, conditions
  src/<kind>/<kind>.controller.ts   its @Controller with a @Reconcile method
  src/<kind>/<kind>.module.ts       a Nest module providing the controller, imported by AppModule
  test/<kind>.e2e-spec.ts           an e2e test against a real API server (Vitest, or Jest
                                    for apps without Vitest)

Options:
  --group <group>       API group, a DNS subdomain you own (e.g. cache.example.com)
  --version <version>   API version (v1, v1alpha1, v2beta1, ...)
  --kind <Kind>         the kind, PascalCase (e.g. Memcached)
  --plural <plural>     the resource's plural (default: the kind in lower case, pluralised)
  --dir <path>          the application's folder (default: the current one)
  --force               overwrite the kind's files if they exist
  -h, --help            show this help`;

export async function createApiCommand(argv: string[], io: CommandIo): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        group: { type: 'string' },
        version: { type: 'string' },
        kind: { type: 'string' },
        plural: { type: 'string' },
        dir: { type: 'string' },
        force: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (error) {
    io.stderr(`nestor create api: ${(error as Error).message}\n\n${CREATE_API_USAGE}\n`);
    return 2;
  }
  if (values.help) {
    io.stdout(`${CREATE_API_USAGE}\n`);
    return 0;
  }
  let names: ApiNames;
  let project: NestProject;
  try {
    names = apiNames(values);
    project = readNestProject(join(io.cwd, values.dir ?? '.'));
  } catch (error) {
    if (error instanceof InvalidApiName || error instanceof NotANestProject) {
      io.stderr(`nestor create api: ${error.message}\n`);
      return error instanceof InvalidApiName ? 2 : 1;
    }
    throw error;
  }
  const { root } = project;
  const folder = join(root, 'src', names.file);
  const written: FileChange[] = [
    { path: join(folder, `${names.file}.resource.ts`), content: resourceSource(names), what: `the ${names.kind} kind` },
    {
      path: join(folder, `${names.file}.controller.ts`),
      content: controllerSource(names, project),
      what: 'its controller',
    },
    { path: join(folder, `${names.file}.module.ts`), content: moduleSource(names, project), what: 'its module' },
    {
      path: join(root, 'test', `${names.file}.e2e-spec.ts`),
      content: e2eSource(names, project),
      what: `its e2e test (${project.runner})`,
    },
  ];
  // Formatted first, so that a second run compares like with like.
  const files = await formatLikeProject(root, written, () => true);
  const existing = files.filter((file) => existsSync(file.path) && readFileSync(file.path, 'utf8') !== file.content);
  if (existing.length > 0 && !values.force) {
    io.stderr(
      `nestor create api: nothing was changed: these files exist and differ from what would be written:\n` +
        existing.map((file) => `  ${file.path}`).join('\n') +
        '\nRemove them, or pass --force to overwrite them.\n',
    );
    return 1;
  }
  const edit = addModuleImport(
    readFileSync(project.appModule, 'utf8'),
    `import { ${names.kind}Module } from '${importPath(project, `./${names.file}/${names.file}.module`)}';`,
    `${names.kind}Module`,
    new RegExp(`\\b${names.kind}Module\\b`),
  );
  if ('error' in edit) {
    io.stderr(
      `nestor create api: nothing was changed: src/app.module.ts: ${edit.error}. Import ${names.kind}Module in your root module by hand, then run again.\n`,
    );
    return 1;
  }
  const moduleEdit = await formatLikeProject(
    root,
    [{ path: project.appModule, content: edit.source, what: `imports ${names.kind}Module` }],
    () => false,
  );
  const changes = effective([...files, ...moduleEdit]);
  if (changes.length === 0) {
    io.stdout(`nestor create api: ${names.kind} is already there; nothing to change.\n`);
    return 0;
  }
  io.stdout(
    `nestor create api: ${names.kind} (${names.plural}.${names.group}/${names.version})\n${apply(root, changes).join('\n')}\n`,
  );
  io.stdout(
    `Next: edit the spec in src/${names.file}/${names.file}.resource.ts and the reconcile in its controller;\n` +
      `build, then \`npm run manifests\` writes the CRD, RBAC and Deployment to deploy/.\n`,
  );
  return 0;
}
