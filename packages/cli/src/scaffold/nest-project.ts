// What `nestor init` and `nestor create api` need to know about the Nest application they
// change: where it is, whether it is an ES module project (Nest 12's `nest new`) or CommonJS
// (Nest 11 and older), and which test runner its e2e tests use.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export type TestRunner = 'vitest' | 'jest';

export interface NestProject {
  root: string;
  packageJson: PackageJson;
  /** `"type": "module"`: relative imports carry `.js`, as tsc's nodenext resolution asks. */
  esm: boolean;
  runner: TestRunner;
  /** The root module's source, `src/app.module.ts` as `nest new` writes it. */
  appModule: string;
}

export interface PackageJson {
  name?: string;
  type?: string;
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  [key: string]: unknown;
}

/** Not a Nest application this command can change; the message says what was expected. */
export class NotANestProject extends Error {
  override readonly name = 'NotANestProject';
}

export function readNestProject(root: string): NestProject {
  const manifest = join(root, 'package.json');
  if (!existsSync(manifest)) {
    throw new NotANestProject(
      `no package.json in ${root}: run this in a Nest application (\`nest new <name>\` makes one)`,
    );
  }
  const packageJson = JSON.parse(readFileSync(manifest, 'utf8')) as PackageJson;
  const deps = { ...packageJson.dependencies, ...packageJson.devDependencies };
  if (!deps['@nestjs/core']) {
    throw new NotANestProject(`${manifest} does not depend on @nestjs/core: this is not a Nest application`);
  }
  const appModule = join(root, 'src', 'app.module.ts');
  if (!existsSync(appModule)) {
    throw new NotANestProject(`no src/app.module.ts in ${root}: the root module is where OperatorModule goes`);
  }
  return {
    root,
    packageJson,
    esm: packageJson.type === 'module',
    // Nest 12 starters test with Vitest, older ones with Jest.
    runner: deps['vitest'] ? 'vitest' : 'jest',
    appModule,
  };
}

/** A relative import specifier as the project's module system wants it. */
export function importPath(project: Pick<NestProject, 'esm'>, path: string): string {
  return project.esm ? `${path}.js` : path;
}
