import { readdir, readFile, rm, rmdir, writeFile, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { GENERATED_NOTICE, MANIFEST_FOLDERS } from '@nestor/operator';

/**
 * What `nestor manifests` wrote at the top of --out before the CRDs, the namespace and
 * the operator had folders of their own. Left in place, that kustomization.yaml would
 * still delete the CRDs and the namespace with the operator.
 */
const FORMER_LAYOUT = ['kustomization.yaml', 'crds.yaml', 'rbac.yaml', 'deployment.yaml'];

/**
 * Writes the files under `out`, then removes what an earlier run wrote there and this one
 * does not (a former layout, a namespace/ no longer asked for): only files that say they
 * were generated, so nothing a person wrote is touched. Returns the paths removed.
 */
export async function writeManifestFiles(out: string, files: Record<string, string>): Promise<string[]> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(out, path)), { recursive: true });
    await writeFile(join(out, path), text);
  }
  const candidates = [...FORMER_LAYOUT];
  for (const folder of MANIFEST_FOLDERS) {
    for (const file of await readdir(join(out, folder)).catch(() => [])) candidates.push(`${folder}/${file}`);
  }
  const removed: string[] = [];
  for (const path of candidates.filter((p) => !(p in files))) {
    if (await isGenerated(join(out, path))) {
      await rm(join(out, path));
      removed.push(path);
    }
  }
  // A folder emptied of what was generated there goes too.
  for (const folder of MANIFEST_FOLDERS) await rmdir(join(out, folder)).catch(() => undefined);
  return removed;
}

async function isGenerated(file: string): Promise<boolean> {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  return text?.split('\n', 1)[0]?.includes(GENERATED_NOTICE) ?? false;
}
