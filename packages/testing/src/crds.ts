import { existsSync, readdirSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';

/** A CustomResourceDefinition as the API server takes it (only the fields read here are typed). */
export interface CustomResourceDefinition {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; [key: string]: unknown };
  spec: {
    group: string;
    names: { plural: string; kind: string; [key: string]: unknown };
    versions: Array<{ name: string; served?: boolean; [key: string]: unknown }>;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

/** A CRD object, or a path to a YAML/JSON file or to a folder of them. */
export type CrdSource = string | CustomResourceDefinition;

const CRD_FILE = new Set(['.yaml', '.yml', '.json']);

/**
 * The CRD files `nestor import crd` vendored beside the kinds' types: every YAML and JSON
 * file under `folder` and its subfolders (`src/kinds/<group>/<group>_<plural>.yaml`),
 * relative to the working directory; none when there is no such folder, so a test lists
 * them before any kind is imported. Pass them to `TestEnvironment.start({ crds })`.
 */
export function importedCrds(folder = join('src', 'kinds')): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && CRD_FILE.has(extname(entry.name)))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

/** Reads every CustomResourceDefinition in the sources (other kinds in the files are ignored). */
export async function loadCustomResourceDefinitions(sources: CrdSource[]): Promise<CustomResourceDefinition[]> {
  const crds: CustomResourceDefinition[] = [];
  for (const source of sources) {
    if (typeof source !== 'string') {
      crds.push(source);
      continue;
    }
    const info = await stat(source).catch(() => {
      throw new Error(`CRD path ${source} does not exist`);
    });
    const files = info.isDirectory()
      ? (await readdir(source))
          .filter((f) => CRD_FILE.has(extname(f)))
          .sort()
          .map((f) => join(source, f))
      : [source];
    for (const file of files) {
      for (const doc of parseAllDocuments(await readFile(file, 'utf8'))) {
        if (doc.errors.length) throw new Error(`${file}: ${doc.errors[0]!.message}`);
        const object = doc.toJS() as CustomResourceDefinition | null;
        if (object?.kind === 'CustomResourceDefinition') crds.push(object);
      }
    }
  }
  return crds;
}
