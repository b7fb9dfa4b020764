import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

// The layering of docs/ARCHITECTURE.md, checked on the sources: which folder of
// packages/operator/src may import which, and which packages each may load. Tests and
// test-support are left out: they may reach across layers. Between the repository's
// packages, tests included, the arrows run one way (the end of this file).

const SRC = fileURLToPath(new URL('../src/', import.meta.url));
const CORE_SRC = fileURLToPath(new URL('../../core/src/', import.meta.url));

/** Folder -> the folders it may import. Anything else is a layering error. */
const ALLOWED: Record<string, readonly string[]> = {
  crd: [],
  conditions: ['crd'],
  client: [],
  runtime: ['client', 'crd', 'conditions'],
  metrics: ['runtime', 'upgrades'],
  manifests: ['crd'],
  webhooks: [],
  serving: ['runtime', 'webhooks'],
  config: ['serving'],
  // Storage-version migration: a leader task over the runtime's watch, writing through core's transport.
  upgrades: ['runtime', 'client'],
  // createOperator: the cluster, manager, Leases, sharding, servers and metrics built from options.
  compose: ['runtime', 'client', 'crd', 'metrics', 'sharding', 'serving', 'config', 'upgrades'],
  nest: ['compose', 'runtime', 'client', 'crd', 'metrics', 'manifests', 'webhooks', 'sharding', 'serving', 'config'],
  terminus: ['runtime'],
  sharding: ['runtime', 'client'],
  // The test doubles of the client seam and the Fleet (@nestor/operator/fake): ReconcileContext
  // is a type from nest/, Fleet and MemberStatus from runtime/.
  fake: ['client', 'crd', 'nest', 'runtime'],
};

/**
 * The rooms of runtime/ -> the rooms they may import, as kube-rs's runtime composes its
 * streams: watch (list and watch one kind) -> cache (informers over watches) -> controller
 * (event sources, queue, worker pool, reconcile loop) -> manager (cluster, Leases, start
 * and stop) -> fleet (member clusters, each a Cluster with its controllers); queue and
 * leases stand alone. '.' is runtime/'s top (backoff, options checks).
 */
const RUNTIME_ROOMS: Record<string, readonly string[]> = {
  '.': [],
  watch: ['.'],
  cache: ['.', 'watch'],
  queue: ['.'],
  leases: ['.'],
  controller: ['.', 'cache', 'queue', 'leases'],
  manager: ['.', 'watch', 'cache', 'queue', 'leases', 'controller'],
  fleet: ['.', 'watch', 'cache', 'queue', 'leases', 'controller', 'manager'],
};

/** Folders that must run without Nest (the `@nestor/operator/runtime` entry loads them). */
const NEST_FREE = [
  'crd',
  'conditions',
  'client',
  'runtime',
  'metrics',
  'manifests',
  'webhooks',
  'sharding',
  'serving',
  'config',
  'compose',
  'upgrades',
  'fake',
];

interface SourceFile {
  path: string;
  folder: string;
  imports: string[];
}

function sources(root: string): SourceFile[] {
  const files: SourceFile[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'test-support' && entry.name !== 'fixtures') walk(path);
      } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts')) {
        const text = readFileSync(path, 'utf8');
        const imports = [
          ...text.matchAll(/^\s*(?:import|export)\s[^;]*?\bfrom\s+'([^']+)'/gm),
          ...text.matchAll(/^\s*import\s+'([^']+)'/gm),
          ...text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g),
        ].map((m) => m[1]!);
        const rel = relative(root, path);
        const folder = rel.includes(sep) ? rel.split(sep)[0]! : '.';
        files.push({ path, folder, imports });
      }
    }
  };
  walk(root);
  return files;
}

const operatorFiles = sources(SRC);

function folderOf(file: SourceFile, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const target = relative(SRC, resolve(dirname(file.path), specifier));
  return target.includes(sep) ? target.split(sep)[0] : '.';
}

function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of operatorFiles) {
    const edges = graph.get(file.folder) ?? new Set<string>();
    graph.set(file.folder, edges);
    for (const specifier of file.imports) {
      const folder = folderOf(file, specifier);
      if (folder && folder !== file.folder) edges.add(folder);
    }
  }
  return graph;
}

/** Every cycle's folders, found by depth-first search. */
function cycles(graph: Map<string, Set<string>>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'visiting');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'visiting') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return found;
}

// Every package of the repo, not only this one: no cycle between the folders of a package
// (a file at a package's root is a node of its own, since a root holds unrelated modules),
// and no cycle between the files of one folder, type-only imports included: a cycle means
// two files hold one concept, or one holds a piece the other's concept needs.

const REPO = fileURLToPath(new URL('../../../', import.meta.url));

/** Each package's sources: its `src/` and any other source folder, tests left out. */
function packageSources(pkg: string): SourceFile[] {
  const root = join(REPO, pkg);
  const files: SourceFile[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED.includes(entry.name)) walk(path);
      } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts')) {
        files.push({ path, folder: nodeOf(root, path), imports: importsOf(readFileSync(path, 'utf8')) });
      }
    }
  };
  walk(root);
  return files;
}

const SKIPPED = ['node_modules', 'dist', 'test-support', 'fixtures', 'controlplane'];

function importsOf(text: string): string[] {
  return [
    ...text.matchAll(/^\s*(?:import|export)\s[^;]*?\bfrom\s+'([^']+)'/gm),
    ...text.matchAll(/^\s*import\s+'([^']+)'/gm),
    ...text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g),
  ].map((m) => m[1]!);
}

/** A package's folder graph node: its top folder under src/, or the file itself at the root. */
function nodeOf(root: string, path: string): string {
  let rel = relative(root, path);
  if (rel.startsWith(`src${sep}`)) rel = rel.slice(4);
  return rel.includes(sep) ? rel.split(sep)[0]! : rel;
}

/** The relative imports of the files, resolved to the .ts file they name. */
function targets(file: SourceFile): string[] {
  return file.imports
    .filter((s) => s.startsWith('.'))
    .map((s) => resolve(dirname(file.path), s).replace(/\.js$/, '.ts'))
    .filter((target) => !target.endsWith('.json'));
}

/** The workspaces of the root package.json that hold TypeScript sources. */
const PACKAGES = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { workspaces: string[] }).workspaces
  .flatMap((workspace) =>
    workspace.endsWith('/*')
      ? readdirSync(join(REPO, workspace.slice(0, -2)), { withFileTypes: true })
          .filter((entry) => entry.isDirectory())
          .map((entry) => join(workspace.slice(0, -2), entry.name))
      : [workspace],
  )
  .filter((pkg) => packageSources(pkg).length > 0);

describe('architecture of every package', () => {
  it('checks every workspace with TypeScript sources', () => {
    for (const pkg of [
      'packages/core',
      'packages/operator',
      'packages/cli',
      'packages/testing',
      'sample-operator',
      'samples/cache-cluster',
      'samples/teamspace',
    ]) {
      assert.ok(PACKAGES.includes(pkg.split('/').join(sep)), `${pkg} is checked`);
    }
  });

  for (const pkg of PACKAGES) {
    const files = packageSources(pkg);
    const root = join(REPO, pkg);

    it(`has no import cycle between the folders of ${pkg}`, () => {
      const graph = new Map<string, Set<string>>();
      for (const file of files) {
        const edges = graph.get(file.folder) ?? new Set<string>();
        graph.set(file.folder, edges);
        for (const target of targets(file)) {
          const node = nodeOf(root, target);
          if (node !== file.folder && !relative(root, target).startsWith('..')) edges.add(node);
        }
      }
      assert.ok(graph.size > 1, `${pkg}: the walk found its files`);
      assert.deepEqual(
        cycles(graph).map((c) => c.join(' -> ')),
        [],
      );
    });

    it(`has no import cycle between the files of one folder in ${pkg}`, () => {
      const graph = new Map<string, Set<string>>();
      for (const file of files) {
        const folder = dirname(file.path);
        graph.set(
          relative(root, file.path),
          new Set(
            targets(file)
              .filter((t) => dirname(t) === folder)
              .map((t) => relative(root, t)),
          ),
        );
      }
      assert.deepEqual(
        cycles(graph).map((c) => c.join(' -> ')),
        [],
      );
    });
  }
});

describe('architecture', () => {
  it('keeps runtime/ in rooms, each importing only the rooms below it, and few files at its top', () => {
    const RUNTIME = join(SRC, 'runtime');
    const roomOf = (path: string) => {
      const rel = relative(RUNTIME, path);
      return rel.includes(sep) ? rel.split(sep)[0]! : '.';
    };
    const violations: string[] = [];
    const top: string[] = [];
    for (const file of operatorFiles.filter((f) => f.folder === 'runtime')) {
      const room = roomOf(file.path);
      if (room === '.') top.push(relative(RUNTIME, file.path));
      if (relative(RUNTIME, file.path) === 'index.ts') continue; // the room's public surface
      const allowed = RUNTIME_ROOMS[room];
      assert.ok(allowed, `runtime/${room} is not a room: add it to RUNTIME_ROOMS and docs/ARCHITECTURE.md`);
      for (const specifier of file.imports) {
        if (!specifier.startsWith('.')) continue;
        const target = resolve(dirname(file.path), specifier);
        if (relative(RUNTIME, target).startsWith('..')) continue; // another layer: the folder rule above
        const to = roomOf(target);
        if (to !== room && !allowed.includes(to)) {
          violations.push(`${relative(SRC, file.path)} imports ${specifier} (runtime/${room} -> runtime/${to})`);
        }
      }
    }
    assert.deepEqual(violations, []);
    assert.ok(top.length <= 12, `runtime/ holds ${top.length} source files at its top: ${top.join(', ')}`);
  });

  it('has no hand-written source file over 450 lines in packages/', () => {
    // Data tables, fixtures and generated files aside: their length is their content.
    const exempt = [
      /grafana-dashboards\.ts$/,
      /kwok-stages\.ts$/,
      /[/\\]fixtures[/\\]/,
      /[/\\]protobuf[/\\]schema-table/,
    ];
    const long: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) {
          if (entry.name !== 'node_modules' && entry.name !== 'dist') walk(path);
        } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts')) {
          const lines = readFileSync(path, 'utf8').split('\n').length;
          if (lines > 450 && !exempt.some((pattern) => pattern.test(path)))
            long.push(`${relative(REPO, path)}: ${lines}`);
        }
      }
    };
    for (const pkg of readdirSync(join(REPO, 'packages'))) {
      const src = join(REPO, 'packages', pkg, 'src');
      if (existsSync(src)) walk(src);
    }
    assert.deepEqual(long, []);
  });

  it('has no import cycle between the folders of @nestor/operator', () => {
    const graph = folderGraph();
    assert.deepEqual(
      cycles(graph).map((c) => c.join(' -> ')),
      [],
    );
  });

  it('imports only downwards: each folder uses only the layers below it', () => {
    const violations: string[] = [];
    for (const file of operatorFiles) {
      if (file.folder === '.') continue; // the root index exports every layer
      const allowed = ALLOWED[file.folder];
      assert.ok(allowed, `folder ${file.folder} is not in the layering: add it to ALLOWED and docs/ARCHITECTURE.md`);
      for (const specifier of file.imports) {
        const folder = folderOf(file, specifier);
        if (folder && folder !== file.folder && !allowed.includes(folder)) {
          violations.push(`${relative(SRC, file.path)} imports ${specifier} (${file.folder} -> ${folder})`);
        }
      }
    }
    assert.deepEqual(violations, []);
  });

  it('keeps Nest out of the runtime entry: crd, client, runtime, metrics load no @nestjs package', () => {
    const violations = operatorFiles
      .filter((file) => NEST_FREE.includes(file.folder))
      .flatMap((file) =>
        file.imports.filter((s) => s.startsWith('@nestjs/')).map((s) => `${relative(SRC, file.path)} imports ${s}`),
      );
    assert.deepEqual(violations, []);
  });

  it('loads no @nestjs module when a program imports @nestor/operator/runtime, /sharding, /webhooks or /fake', () => {
    // What a Nest-free user runs: the loaded specifiers are recorded by a resolve hook. The
    // sharding and webhooks entries are their folders' index files, Nest-free by the layering
    // above; checked here too since a user imports them beside /runtime.
    for (const [entry, name] of [
      ['@nestor/operator/runtime', 'Manager'],
      ['@nestor/operator/sharding', 'HashRing'],
      ['@nestor/operator/webhooks', 'ConversionWebhook'],
      ['@nestor/operator/fake', 'FakeKubeClient'],
    ]) {
      const program = [
        "import { registerHooks } from 'node:module';",
        'const seen = new Set();',
        'registerHooks({ resolve(specifier, context, next) { seen.add(specifier); return next(specifier, context); } });',
        `const entry = await import('${entry}');`,
        `if (typeof entry.${name} !== 'function') throw new Error('no ${name} export');`,
        'console.log(JSON.stringify([...seen]));',
      ].join('\n');
      const loaded = JSON.parse(
        execFileSync(process.execPath, ['--input-type=module', '-e', program], { cwd: SRC, encoding: 'utf8' }),
      ) as string[];
      assert.ok(loaded.includes('@nestor/core'), `the hook saw ${entry}'s imports`);
      assert.deepEqual(
        loaded.filter((s) => s.startsWith('@nestjs/')),
        [],
        entry,
      );
    }
  });

  it('loads none of client-node but its kubeconfig parsing, from either entry (its generated API costs ~55 MB)', () => {
    // Resolved URLs, so that a deep import inside client-node (its index, gen/) is seen too.
    for (const entry of ['@nestor/operator', '@nestor/operator/runtime']) {
      const program = [
        "import { registerHooks } from 'node:module';",
        'const seen = new Set();',
        'registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); seen.add(r.url); return r; } });',
        `await import('${entry}');`,
        'console.log(JSON.stringify([...seen]));',
      ].join('\n');
      const loaded = JSON.parse(
        execFileSync(process.execPath, ['--input-type=module', '-e', program], { cwd: SRC, encoding: 'utf8' }),
      ) as string[];
      const clientNode = loaded
        .filter((url) => url.includes('/@kubernetes/client-node/'))
        .map((url) => url.slice(url.indexOf('/@kubernetes/client-node/') + '/@kubernetes/client-node/'.length));
      assert.ok(
        loaded.some((url) => url.includes('/core/dist/')),
        `the hook saw ${entry}'s imports`,
      );
      assert.deepEqual(clientNode, ['dist/config_types.js'], `${entry} loads these client-node modules`);
    }
  });

  it('keeps @nestor/core at the bottom: it imports no other layer, no Nest, no RxJS', () => {
    const violations = sources(CORE_SRC).flatMap((file) =>
      file.imports
        .filter((s) => s.startsWith('@nestor/') || s.startsWith('@nestjs/') || s === 'rxjs')
        .map((s) => `${relative(CORE_SRC, file.path)} imports ${s}`),
    );
    assert.deepEqual(violations, []);
  });

  it('listens only in serving/: no other folder opens a server', () => {
    // What listens (ports, certificates, callers' authorization) is one room, which nest/ binds.
    const opening = /\b(?:createServer|createSecureServer)\s*\(|\.listen\s*\(/;
    const listeners = operatorFiles
      .filter((file) => opening.test(readFileSync(file.path, 'utf8')))
      .map((file) => relative(SRC, file.path));
    assert.ok(listeners.length > 0, 'the servers are found');
    assert.deepEqual(
      listeners.filter((path) => !path.startsWith(`serving${sep}`)),
      [],
    );
  });

  it('finds the imports it checks (the check is not vacuous)', () => {
    const graph = folderGraph();
    assert.ok(graph.get('nest')?.has('runtime'), 'nest -> runtime is seen');
    assert.ok(graph.get('runtime')?.has('client'), 'runtime -> client is seen');
    assert.ok(
      cycles(
        new Map([
          ['a', new Set(['b'])],
          ['b', new Set(['a'])],
        ]),
      ).length > 0,
      'a cycle is found',
    );
  });
});

// ---- Between packages: packages/*, sample-operator and samples/* (bench/ measures them all and is left out).

/**
 * Package -> the packages it may use, by any path: package.json, tsconfig references,
 * imports (its tests' too). Bottom to top: the envtest control plane needs only core, so
 * the operator's tests can use it; the fake client implements the operator's KubeClient,
 * so it ships with the operator (`@nestor/operator/fake`), not with `@nestor/testing`.
 */
const PACKAGE_USES: Record<string, readonly string[]> = {
  '@nestor/core': [],
  '@nestor/testing': ['@nestor/core'],
  '@nestor/operator': ['@nestor/core', '@nestor/testing'],
  '@nestor/cli': ['@nestor/operator', '@nestor/testing'],
  'sample-operator': ['@nestor/operator', '@nestor/testing'],
  'cache-cluster-operator': ['@nestor/operator', '@nestor/testing'],
  'teamspace-operator': ['@nestor/operator', '@nestor/testing'],
};

interface WorkspacePackage {
  name: string;
  dir: string;
  manifest: { private?: boolean } & Partial<Record<DependencyField, Record<string, string>>>;
}

type DependencyField = 'dependencies' | 'devDependencies' | 'peerDependencies' | 'optionalDependencies';
const DEPENDENCY_FIELDS: DependencyField[] = [
  'dependencies',
  'devDependencies',
  'peerDependencies',
  'optionalDependencies',
];

const workspace: WorkspacePackage[] = [
  ...readdirSync(join(REPO, 'packages'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(REPO, 'packages', entry.name, 'package.json')))
    .map((entry) => join(REPO, 'packages', entry.name)),
  join(REPO, 'sample-operator'),
  ...readdirSync(join(REPO, 'samples'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(REPO, 'samples', entry.name, 'package.json')))
    .map((entry) => join(REPO, 'samples', entry.name)),
].map((dir) => {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as WorkspacePackage['manifest'] & {
    name: string;
  };
  return { name: manifest.name, dir, manifest };
});

const packageAt = (path: string) => workspace.find((p) => path === p.dir || path.startsWith(p.dir + sep));

/** A package's arrows to the others, each with where it was found. */
function arrowsOf(pkg: WorkspacePackage): Array<{ to: string; where: string; test: boolean }> {
  const names = new Set(workspace.map((p) => p.name));
  const arrows: Array<{ to: string; where: string; test: boolean }> = [];
  for (const field of DEPENDENCY_FIELDS) {
    for (const to of Object.keys(pkg.manifest[field] ?? {})) {
      if (names.has(to)) arrows.push({ to, where: `package.json ${field}`, test: field === 'devDependencies' });
    }
  }
  const tsconfig = ts.readConfigFile(join(pkg.dir, 'tsconfig.json'), ts.sys.readFile).config as {
    references?: Array<{ path: string }>;
  };
  for (const reference of tsconfig.references ?? []) {
    const to = packageAt(resolve(pkg.dir, reference.path));
    if (to) arrows.push({ to: to.name, where: `tsconfig.json reference ${reference.path}`, test: true });
  }
  const src = join(pkg.dir, 'src');
  for (const path of tsFiles(src)) {
    const rel = relative(pkg.dir, path);
    const test = /\.test\.ts$|(^|\/)(test-support|fixtures)\//.test(rel.split(sep).join('/'));
    for (const { fileName } of ts.preProcessFile(readFileSync(path, 'utf8'), true, true).importedFiles) {
      const to = fileName.startsWith('.')
        ? packageAt(resolve(dirname(path), fileName))?.name
        : [...names].find((name) => fileName === name || fileName.startsWith(`${name}/`));
      if (to && to !== pkg.name) arrows.push({ to, where: `${rel} imports ${fileName}`, test });
    }
  }
  return arrows;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('architecture between packages', () => {
  const arrows = new Map(workspace.map((pkg) => [pkg.name, arrowsOf(pkg)]));

  it('knows every package of the repository', () => {
    assert.deepEqual(workspace.map((p) => p.name).sort(), Object.keys(PACKAGE_USES).sort());
  });

  it('has arrows that run one way: no cycle between packages', () => {
    const graph = new Map(Object.entries(PACKAGE_USES).map(([name, uses]) => [name, new Set(uses)]));
    assert.deepEqual(
      cycles(graph).map((c) => c.join(' -> ')),
      [],
    );
  });

  it('uses only the packages below it: in package.json, tsconfig references and imports, tests included', () => {
    const violations = [...arrows].flatMap(([name, found]) =>
      found.filter((a) => !PACKAGE_USES[name]?.includes(a.to)).map((a) => `${name} -> ${a.to}: ${a.where}`),
    );
    assert.deepEqual(violations, []);
  });

  it('declares each package it imports, and a published one imports its devDependencies from tests only', () => {
    const violations: string[] = [];
    for (const pkg of workspace) {
      const declared = (field: DependencyField, to: string) => pkg.manifest[field]?.[to] !== undefined;
      for (const arrow of arrows.get(pkg.name)!.filter((a) => a.where.includes(' imports '))) {
        const runtime = declared('dependencies', arrow.to) || declared('peerDependencies', arrow.to);
        if (!runtime && !declared('devDependencies', arrow.to)) {
          violations.push(`${pkg.name}: ${arrow.where}, which its package.json does not declare`);
        } else if (!runtime && !arrow.test && !pkg.manifest.private) {
          violations.push(`${pkg.name}: ${arrow.where}, a devDependency, outside its tests`);
        }
      }
    }
    assert.deepEqual(violations, []);
  });

  it('finds the arrows it checks (the check is not vacuous)', () => {
    const operator = arrows.get('@nestor/operator')!;
    assert.ok(operator.some((a) => a.to === '@nestor/testing' && a.where.includes(' imports ') && a.test));
    assert.ok(operator.some((a) => a.to === '@nestor/core' && a.where.startsWith('package.json dependencies')));
    assert.ok(arrows.get('@nestor/testing')!.some((a) => a.to === '@nestor/core' && a.where.startsWith('tsconfig')));
  });
});
