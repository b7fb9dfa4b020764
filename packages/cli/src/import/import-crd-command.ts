// `nestor import crd`: TypeScript for kinds other projects define (cert-manager's Certificate,
// Gateway API's HTTPRoute), as kopium and Pepr's `kfc crd` make them: a file per served
// version of each CRD, and the CRD itself beside them, read from files, stdin or the
// cluster. Generated files are rewritten in place, those of versions no longer served
// removed; any other file in the way is kept unless --force. Every file is written or none,
// as `nestor manifests` writes its own (manifest-output.ts).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, resolve, sep } from 'node:path';
import { parseArgs } from 'node:util';
import { ClusterConfig, KubeApiError, Transport } from '@nestor/operator';
import { loadKubeConfig } from '@nestor/operator/runtime';
import type { CommandIo } from '../command-io.js';
import { kebabCase } from '../scaffold/api-names.js';
import { ManifestWriteError, writeManifestFiles } from '../manifest-output.js';
import { effective, type FileChange } from '../scaffold/file-changes.js';
import { readBounded, readStdinBounded } from './bounded-read.js';
import { crdOf, crdsOfText, CrdSourceError, type CrdDefinition } from './crd-documents.js';
import { constructorName, CrdSchemaError, crdVersionFile, GENERATED_MARK, kindIdentifier } from './crd-typescript.js';
import { VENDORED_MARK, vendoredCrdFileName, vendoredCrdText } from './vendored-crd.js';

export const IMPORT_CRD_USAGE = `Usage: nestor import crd <file | folder | -> ... [options]
       nestor import crd --from-cluster <crd name> [options]

Writes TypeScript for kinds another project defines, from its CustomResourceDefinitions:
one file per served version, <out>/<group>/<kind>.<version>.ts, holding an interface for
each object of the version's schema, a resource descriptor named as the kind and a
function that makes an object with its apiVersion and kind (newCertificate); and the CRD
itself, <out>/<group>/<group>_<plural>.yaml, to install where the kind must be served.
Give the descriptor to @Controller, owns, @Watches, KubeClient and FakeKubeClient as you
give them Deployment; its interface is the type of the objects:

  import { Certificate } from './kinds/cert-manager.io/certificate.v1.js';
  @Controller(Certificate)  ...  reconcile(certificate: Certificate)

A file holds YAML or JSON documents: CRDs, Lists of them (kubectl get crd -o yaml), other
objects (skipped). A folder: its .yaml, .yml and .json files, not its subfolders. -: stdin.
Running it again rewrites the files it wrote when the CRD changed, removes those of
versions no longer served, and changes nothing else. Every file is written, or none.

Options:
  --from-cluster <name>  read the CRD of this name (e.g. certificates.cert-manager.io) from
                         the cluster: the kubeconfig of KUBECONFIG, else ~/.kube/config, as
                         kubectl; repeatable
  --kubeconfig <path>    the kubeconfig file for --from-cluster
  --out <dir>            where the files go (default: src/kinds)
  --dir <path>           the project's folder, which --out is relative to (default: the
                         current one)
  --force                overwrite files in the way that nestor import crd did not write
  -h, --help             show this help`;

/** What the command reads besides the CommandIo: stdin for `-` (tests give their own). */
export interface ImportIo extends CommandIo {
  stdin?: () => Promise<string>;
}

const CRD_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;
const EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

export async function importCrdCommand(argv: string[], io: ImportIo): Promise<number> {
  let values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      options: {
        'from-cluster': { type: 'string', multiple: true },
        kubeconfig: { type: 'string' },
        out: { type: 'string' },
        dir: { type: 'string' },
        force: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
      strict: true,
    }));
  } catch (error) {
    io.stderr(`nestor import crd: ${(error as Error).message}\n\n${IMPORT_CRD_USAGE}\n`);
    return 2;
  }
  if (values.help) {
    io.stdout(`${IMPORT_CRD_USAGE}\n`);
    return 0;
  }
  const fromCluster = values['from-cluster'] ?? [];
  if (positionals.length === 0 && fromCluster.length === 0) {
    io.stderr(
      `nestor import crd: say where the CRDs are: a file, a folder, - for stdin, or --from-cluster <name>\n\n${IMPORT_CRD_USAGE}\n`,
    );
    return 2;
  }
  const badName = fromCluster.find((name) => !CRD_NAME.test(name));
  if (badName !== undefined) {
    io.stderr(
      `nestor import crd: --from-cluster ${JSON.stringify(badName)} is not a CRD name: <plural>.<group>, e.g. certificates.cert-manager.io\n`,
    );
    return 2;
  }
  if (values.kubeconfig !== undefined && fromCluster.length === 0) {
    io.stderr('nestor import crd: --kubeconfig is for --from-cluster\n');
    return 2;
  }

  const root = resolve(io.cwd, values.dir ?? '.');
  const out = resolve(root, values.out ?? join('src', 'kinds'));
  const crds: CrdDefinition[] = [];
  const notes: string[] = [];
  let next: string | undefined;
  try {
    for (const source of positionals) {
      for (const { text, origin } of await sourceTexts(source, io)) {
        const read = await crdsOfText(text, origin);
        crds.push(...read.crds);
        for (const skipped of read.skipped) notes.push(`${origin}: skipped ${skipped}: not a CustomResourceDefinition`);
      }
    }
    if (fromCluster.length > 0) crds.push(...(await crdsFromCluster(fromCluster, io.cwd, values.kubeconfig)));
    if (crds.length === 0) throw new CrdSourceError(`no CustomResourceDefinition in ${positionals.join(', ')}`);
    const planned = plan(crds, out, notes);
    const inTheWay = planned.filter((file) => existsSync(file.path) && !isGenerated(readFileSync(file.path, 'utf8')));
    if (inTheWay.length > 0 && !values.force) {
      io.stderr(
        `nestor import crd: nothing was changed: these files exist and were not written by nestor import crd:\n` +
          inTheWay.map((file) => `  ${relative(root, file.path)}`).join('\n') +
          '\nMove them, choose another --out, or pass --force to overwrite them.\n',
      );
      return 1;
    }
    const changes = planned.filter((file) => effective([file]).length > 0);
    const stale = staleFiles(crds, out);
    if (changes.length === 0 && stale.length === 0) {
      io.stdout(
        `nestor import crd: ${relative(root, out) || '.'} is up to date (${planned.length} file${planned.length === 1 ? '' : 's'}); nothing to change.\n`,
      );
    } else {
      const report = [
        ...changes.map(
          (file) => `  ${existsSync(file.path) ? 'updated' : 'created'} ${relative(root, file.path)}: ${file.what}`,
        ),
        ...stale.map((file) => `  removed ${relative(root, file.path)}: ${file.what}`),
      ];
      await writeManifestFiles(
        out,
        Object.fromEntries(changes.map((file) => [relative(out, file.path), file.content])),
        { folders: [], formerLayout: stale.map((file) => relative(out, file.path)), generated: isGenerated },
      );
      const kinds = new Set(crds.map((crd) => crd.name)).size;
      const versions = planned.filter((file) => file.version).length;
      io.stdout(
        `nestor import crd: ${kinds} kind${kinds === 1 ? '' : 's'}, ${versions} version${versions === 1 ? '' : 's'}\n${report.join('\n')}\n`,
      );
      const first = planned.find((file) => file.version)!;
      next = nextSteps(first.crd, first.path, root, out);
    }
  } catch (error) {
    const message = userError(error, root);
    if (message === undefined) throw error;
    io.stderr(`nestor import crd: nothing was changed: ${message}\n`);
    return 1;
  }
  for (const note of notes) io.stdout(`note: ${note}\n`);
  if (next) io.stdout(next);
  return 0;
}

/** What to tell of a failure the user can act on, or undefined for a bug (whose stack is worth seeing). */
function userError(error: unknown, root: string): string | undefined {
  if (error instanceof CrdSourceError || error instanceof CrdSchemaError) return error.message;
  if (error instanceof ManifestWriteError) {
    return `${relative(root, error.path) || '.'}: ${error.reason.replaceAll(`${root}${sep}`, '')}`;
  }
  const { code, path, message } = error as NodeJS.ErrnoException;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) {
    return `${path ? `${relative(root, path)}: ` : ''}${code} (${message.replace(/^[A-Z]+: /, '')})`;
  }
  return undefined;
}

/** The lines after a run that wrote something: how to import the kind, and where its CRD is. */
function nextSteps(crd: CrdDefinition, path: string, root: string, out: string): string {
  const name = kindIdentifier(crd.kind);
  const make = constructorName(crd.kind);
  // Imported from the project's sources, as an ESM project must name them (.js), or a CommonJS one may.
  const src = join(root, 'src');
  const base = path.startsWith(`${src}${sep}`) ? src : root;
  const esm = packageType(root) !== 'commonjs';
  const specifier = `./${relative(base, path)
    .split(sep)
    .join('/')
    .replace(/\.ts$/, esm ? '.js' : '')}`;
  const crdFile = relative(root, join(out, crd.group, vendoredCrdFileName(crd)));
  return (
    `Next: import { ${name}, ${make} } from '${specifier}' (in a file of ${relative(root, base) || '.'}/) and use ${name} as you use Deployment: @Controller(${name}), owns: [${name}], kube.get(${name}, ref); ${make}({ metadata, spec }) makes one with its apiVersion and kind.\n` +
    `The cluster must serve ${crd.name}: ${crdFile} is its CRD (kubectl apply -f ${crdFile}; in tests, TestEnvironment.start({ crds: ['${relative(root, join(out, crd.group))}'] })).\n`
  );
}

/** The project's module system: its package.json's `type`, `commonjs` if it has none (Node's default), `module` with no package.json (`.js` works in both). */
function packageType(root: string): 'module' | 'commonjs' {
  try {
    const type = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { type?: unknown }).type;
    return type === 'commonjs' || (type === undefined && existsSync(join(root, 'package.json')))
      ? 'commonjs'
      : 'module';
  } catch {
    return 'module';
  }
}

function isGenerated(text: string): boolean {
  return text.startsWith(GENERATED_MARK) || text.startsWith(VENDORED_MARK);
}

/** A file to write, the CRD it is from, and the version its types are of (none for the CRD itself). */
type PlannedFile = FileChange & { crd: CrdDefinition; version?: string };

/**
 * One file per served version of each CRD and the CRD itself; two CRDs of one name, or two
 * kinds in one file, are refused. What the generator renamed goes into the notes.
 */
function plan(crds: CrdDefinition[], out: string, notes: string[]): PlannedFile[] {
  const byName = new Map<string, CrdDefinition>();
  const byPath = new Map<string, string>();
  const files: PlannedFile[] = [];
  const claim = (path: string, crd: CrdDefinition) => {
    const other = byPath.get(path);
    if (other) throw new CrdSourceError(`${crd.name} and ${other} would both be written to ${path}`);
    byPath.set(path, crd.name);
  };
  for (const crd of crds) {
    const earlier = byName.get(crd.name);
    if (earlier) {
      throw new CrdSourceError(
        `the CustomResourceDefinition ${crd.name} is in ${earlier.origin} and in ${crd.origin}: import one of them`,
      );
    }
    byName.set(crd.name, crd);
    const served = crd.versions.filter((version) => version.served);
    if (served.length === 0) throw new CrdSourceError(`${crd.origin}: ${crd.name} serves no version`);
    for (const version of crd.versions) {
      if (!version.served) {
        notes.push(`${crd.name}: skipped ${version.name}, which is not served`);
        continue;
      }
      const path = join(out, crd.group, `${kebabCase(crd.kind)}.${version.name}.ts`);
      claim(path, crd);
      const file = crdVersionFile(crd, version);
      notes.push(...file.notes);
      files.push({
        crd,
        version: version.name,
        path,
        content: file.source,
        what: `${crd.kind} (${crd.name}/${version.name}${version.storage ? ', stored' : ''}${version.deprecated ? ', deprecated' : ''})`,
      });
    }
    const path = join(out, crd.group, vendoredCrdFileName(crd));
    claim(path, crd);
    files.push({ crd, path, content: vendoredCrdText(crd), what: `the CRD of ${crd.kind} (${crd.name})` });
  }
  return files;
}

/**
 * Files this command wrote for the imported CRDs' versions that are served no more: their
 * first line names the CRD and the version.
 */
function staleFiles(crds: CrdDefinition[], out: string): Array<{ path: string; what: string }> {
  const stale: Array<{ path: string; what: string }> = [];
  for (const crd of crds) {
    const folder = join(out, crd.group);
    if (!existsSync(folder) || !statSync(folder).isDirectory()) continue;
    const served = new Set(crd.versions.filter((version) => version.served).map((version) => version.name));
    const mark = `${GENERATED_MARK} from the CustomResourceDefinition ${crd.name}, version `;
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
      const path = join(folder, entry.name);
      const firstLine = readFileSync(path, 'utf8').split('\n', 1)[0]!;
      if (!firstLine.startsWith(mark)) continue;
      const version = firstLine.slice(mark.length).replace(/\.$/, '');
      if (!served.has(version)) stale.push({ path, what: `${crd.name}/${version} is no longer served` });
    }
  }
  return stale;
}

/** The texts a command-line source names: a file, a folder's CRD files, or stdin. */
async function sourceTexts(source: string, io: ImportIo): Promise<Array<{ text: string; origin: string }>> {
  if (source === '-') return [{ text: await (io.stdin ?? readStdinBounded)(), origin: 'stdin' }];
  const path = resolve(io.cwd, source);
  if (!existsSync(path)) throw new CrdSourceError(`${source} does not exist`);
  // Whatever it is (a file, a device, a FIFO, a process substitution), it is read to the cap and no further.
  if (!statSync(path).isDirectory()) return [{ text: await readBounded(path, source), origin: source }];
  const files = readdirSync(path, { withFileTypes: true })
    .filter((entry) => entry.isFile() && EXTENSIONS.has(extname(entry.name).toLowerCase()))
    .map((entry) => entry.name)
    .sort();
  if (files.length === 0) throw new CrdSourceError(`${source} holds no .yaml, .yml or .json file`);
  const texts: Array<{ text: string; origin: string }> = [];
  for (const file of files) {
    texts.push({ text: await readBounded(join(path, file), join(source, file)), origin: join(source, file) });
  }
  return texts;
}

/** The CRDs of these names, read from the cluster the kubeconfig points at, as kubectl get crd would. */
async function crdsFromCluster(names: string[], cwd: string, kubeconfig?: string): Promise<CrdDefinition[]> {
  let config;
  try {
    if (kubeconfig !== undefined) {
      const path = resolve(cwd, kubeconfig);
      if (!existsSync(path)) throw new Error(`--kubeconfig ${kubeconfig} does not exist`);
      config = ClusterConfig.fromFile(path);
    } else {
      config = loadKubeConfig();
    }
  } catch (error) {
    throw new CrdSourceError(
      `--from-cluster: ${(error as Error).message}${kubeconfig === undefined ? '\n(nestor import crd takes --kubeconfig <file> too)' : ''}`,
    );
  }
  const server = config.getCurrentCluster()?.server ?? 'the cluster';
  const transport = await Transport.fromKubeConfig(config, { requestTimeoutMs: 30_000 });
  try {
    const crds: CrdDefinition[] = [];
    for (const name of names) {
      let object: Record<string, unknown>;
      try {
        object = await transport.json('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
      } catch (error) {
        if (error instanceof KubeApiError && error.status === 404) {
          throw new CrdSourceError(
            `${server} has no CustomResourceDefinition ${name}: kubectl get crd lists those it has`,
          );
        }
        if (error instanceof KubeApiError) {
          throw new CrdSourceError(`reading the CustomResourceDefinition ${name} from ${server}: ${error.message}`);
        }
        throw error;
      }
      crds.push(crdOf(object, `${server}`));
    }
    return crds;
  } finally {
    transport.close();
  }
}
