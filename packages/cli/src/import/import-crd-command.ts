// `nestor import crd`: TypeScript for kinds other projects define (cert-manager's Certificate,
// Gateway API's HTTPRoute), as kopium and Pepr's `kfc crd` make them: a file per served
// version of each CRD, read from files, stdin or the cluster. Generated files are rewritten
// in place; any other file in the way is kept unless --force.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ClusterConfig, KubeApiError, Transport } from '@nestor/operator';
import { loadKubeConfig } from '@nestor/operator/runtime';
import type { CommandIo } from '../command-io.js';
import { kebabCase } from '../scaffold/api-names.js';
import { apply, effective, type FileChange } from '../scaffold/file-changes.js';
import { crdOf, crdsOfText, CrdSourceError, MAX_SOURCE_BYTES, type CrdDefinition } from './crd-documents.js';
import { CrdSchemaError, crdVersionSource, GENERATED_MARK, kindIdentifier } from './crd-typescript.js';

export const IMPORT_CRD_USAGE = `Usage: nestor import crd <file | folder | -> ... [options]
       nestor import crd --from-cluster <crd name> [options]

Writes TypeScript for kinds another project defines, from its CustomResourceDefinitions:
one file per served version, <out>/<group>/<kind>.<version>.ts, holding an interface for
each object of the version's schema and a resource descriptor named as the kind. Give the
descriptor to @Controller, owns, @Watches, KubeClient and FakeKubeClient as you give them
Deployment; its interface is the type of the objects:

  import { Certificate } from './kinds/cert-manager.io/certificate.v1.js';
  @Controller(Certificate)  ...  reconcile(certificate: Certificate)

A file holds YAML or JSON documents: CRDs, Lists of them (kubectl get crd -o yaml), other
objects (skipped). A folder: its .yaml, .yml and .json files, not its subfolders. -: stdin.
Running it again rewrites the files it wrote when the CRD changed, and nothing else.

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
  let changes: PlannedFile[];
  try {
    for (const source of positionals) {
      for (const { text, origin } of await sourceTexts(source, io)) {
        const read = crdsOfText(text, origin);
        crds.push(...read.crds);
        for (const skipped of read.skipped) notes.push(`${origin}: skipped ${skipped}: not a CustomResourceDefinition`);
      }
    }
    if (fromCluster.length > 0) crds.push(...(await crdsFromCluster(fromCluster, io.cwd, values.kubeconfig)));
    if (crds.length === 0) throw new CrdSourceError(`no CustomResourceDefinition in ${positionals.join(', ')}`);
    const planned = plan(crds, out, notes);
    const inTheWay = planned.filter(
      (file) => existsSync(file.path) && !readFileSync(file.path, 'utf8').startsWith(GENERATED_MARK),
    );
    if (inTheWay.length > 0 && !values.force) {
      io.stderr(
        `nestor import crd: nothing was changed: these files exist and were not written by nestor import crd:\n` +
          inTheWay.map((file) => `  ${relative(root, file.path)}`).join('\n') +
          '\nMove them, choose another --out, or pass --force to overwrite them.\n',
      );
      return 1;
    }
    changes = planned.filter((file) => effective([file]).length > 0);
    if (changes.length === 0) {
      io.stdout(
        `nestor import crd: ${relative(root, out) || '.'} is up to date (${planned.length} file${planned.length === 1 ? '' : 's'}); nothing to change.\n`,
      );
    } else {
      const kinds = new Set(crds.map((crd) => crd.name)).size;
      io.stdout(
        `nestor import crd: ${kinds} kind${kinds === 1 ? '' : 's'}, ${planned.length} version${planned.length === 1 ? '' : 's'}\n${apply(root, changes).join('\n')}\n`,
      );
    }
  } catch (error) {
    if (error instanceof CrdSourceError || error instanceof CrdSchemaError) {
      io.stderr(`nestor import crd: nothing was changed: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
  for (const note of notes) io.stdout(`note: ${note}\n`);
  if (changes.length > 0) {
    const { crd, path } = changes[0]!;
    const name = kindIdentifier(crd.kind);
    io.stdout(
      `Next: import { ${name} } from ${relative(root, path)} and use it as you use Deployment: @Controller(${name}), owns: [${name}], kube.get(${name}, ref).\n` +
        `The cluster must serve ${crd.name}: install it from the project that defines it.\n`,
    );
  }
  return 0;
}

/** A file to write, and the CRD it is from. */
type PlannedFile = FileChange & { crd: CrdDefinition };

/** One file per served version of each CRD; two CRDs of one name, or two kinds in one file, are refused. */
function plan(crds: CrdDefinition[], out: string, notes: string[]): PlannedFile[] {
  const byName = new Map<string, CrdDefinition>();
  const byPath = new Map<string, string>();
  const files: PlannedFile[] = [];
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
      const other = byPath.get(path);
      if (other) throw new CrdSourceError(`${crd.name} and ${other} would both be written to ${path}`);
      byPath.set(path, crd.name);
      files.push({
        crd,
        path,
        content: crdVersionSource(crd, version),
        what: `${crd.kind} (${crd.name}/${version.name}${version.storage ? ', stored' : ''}${version.deprecated ? ', deprecated' : ''})`,
      });
    }
  }
  return files;
}

/** The texts a command-line source names: a file, a folder's CRD files, or stdin. */
async function sourceTexts(source: string, io: ImportIo): Promise<Array<{ text: string; origin: string }>> {
  if (source === '-') return [{ text: await (io.stdin ?? readStdin)(), origin: 'stdin' }];
  const path = resolve(io.cwd, source);
  if (!existsSync(path)) throw new CrdSourceError(`${source} does not exist`);
  if (!statSync(path).isDirectory()) return [{ text: readSource(path, source), origin: source }];
  const files = readdirSync(path, { withFileTypes: true })
    .filter((entry) => entry.isFile() && EXTENSIONS.has(extname(entry.name).toLowerCase()))
    .map((entry) => entry.name)
    .sort();
  if (files.length === 0) throw new CrdSourceError(`${source} holds no .yaml, .yml or .json file`);
  return files.map((file) => ({ text: readSource(join(path, file), join(source, file)), origin: join(source, file) }));
}

function readSource(path: string, origin: string): string {
  if (statSync(path).size > MAX_SOURCE_BYTES) {
    throw new CrdSourceError(`${origin}: larger than ${MAX_SOURCE_BYTES / 1024 / 1024} MiB; is it a CRD file?`);
  }
  return readFileSync(path, 'utf8');
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_SOURCE_BYTES) throw new CrdSourceError(`stdin: larger than ${MAX_SOURCE_BYTES / 1024 / 1024} MiB`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
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
