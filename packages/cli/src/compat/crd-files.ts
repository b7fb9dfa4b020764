// The CRDs a compatibility check compares, read from what the user names: CRD files, YAML
// streams (`nestor manifests` without --out, kubectl get crd -o yaml), or folders of them (a
// `nestor manifests --out` folder, whose crds/ holds them). Other objects are skipped.
import { existsSync, lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, resolve } from 'node:path';
import { readComparedCrd, type ComparedCrd } from '@nestor/operator/manifests';
import { parseAllDocuments } from 'yaml';
import { CrdSourceError, MAX_SOURCE_BYTES } from '../import/crd-documents.js';

const EXTENSIONS = new Set(['.yaml', '.yml', '.json']);
/** Deep enough for `<dir>/crds/` and a kustomize base or two below it. */
const MAX_DEPTH = 4;

/** Every CRD in the files and folders named, relative to cwd; throws naming a path it cannot read. */
export function readCrdFiles(paths: readonly string[], cwd: string): ComparedCrd[] {
  const crds: ComparedCrd[] = [];
  for (const given of paths) {
    const path = resolve(cwd, given);
    if (!existsSync(path)) throw new CrdSourceError(`${given} does not exist`);
    const files = statSync(path).isDirectory() ? filesIn(path, given) : [path];
    const before = crds.length;
    for (const file of files) {
      const origin = relative(cwd, file) || file;
      if (statSync(file).size > MAX_SOURCE_BYTES) {
        throw new CrdSourceError(`${origin}: larger than ${MAX_SOURCE_BYTES / 1024 / 1024} MiB; is it a CRD file?`);
      }
      for (const document of documentsOf(readFileSync(file, 'utf8'), origin)) collect(document, origin, crds);
    }
    if (crds.length === before) throw new CrdSourceError(`${given} holds no CustomResourceDefinition`);
  }
  return crds;
}

function collect(value: unknown, origin: string, crds: ComparedCrd[]): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
  const object = value as Record<string, unknown>;
  if (object.kind === 'CustomResourceDefinition') {
    crds.push(readComparedCrd(object, origin));
  } else if (typeof object.kind === 'string' && object.kind.endsWith('List') && Array.isArray(object.items)) {
    for (const item of object.items) collect(item, origin, crds);
  }
}

/** A folder's YAML and JSON files, its subfolders' too, in name order; links are not followed. */
function filesIn(dir: string, given: string, depth = 0): string[] {
  if (existsSync(join(dir, 'Chart.yaml'))) {
    throw new CrdSourceError(
      `${given} is a Helm chart, whose templates are YAML only once rendered: give the CRDs of helm template, or the chart's templates/crds.yaml rendered`,
    );
  }
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name);
    if (lstatSync(path).isSymbolicLink()) continue;
    if (entry.isDirectory() && depth < MAX_DEPTH && !entry.name.startsWith('.'))
      files.push(...filesIn(path, given, depth + 1));
    else if (entry.isFile() && EXTENSIONS.has(extname(entry.name).toLowerCase())) files.push(path);
  }
  return files;
}

/**
 * The documents' values. JSON (kubectl get -o json) goes through JSON.parse. For YAML, the
 * yaml package's duplicate-key check is off: it compares each key of a mapping with every
 * other, quadratic in the keys of another project's file (8,000 keys took 9 s here).
 */
function documentsOf(text: string, origin: string): unknown[] {
  if (/^\s*\{/.test(text)) {
    try {
      return [JSON.parse(text)];
    } catch {
      // Not JSON after all (a YAML flow mapping, or broken): the YAML parser says where.
    }
  }
  const documents = parseAllDocuments(text, { uniqueKeys: false, prettyErrors: false });
  if (documents.some((document) => document.errors.length > 0)) {
    // Parsed again only to say where: line and column cost a pass of their own.
    const [error] = parseAllDocuments(text, { uniqueKeys: false, prettyErrors: true }).flatMap((d) => d.errors);
    throw new CrdSourceError(`${origin}: not YAML or JSON: ${error?.message ?? 'unreadable'}`);
  }
  return documents.map((document) => {
    try {
      return document.toJS({ maxAliasCount: 100 });
    } catch (failure) {
      throw new CrdSourceError(`${origin}: ${(failure as Error).message}`);
    }
  });
}
