import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { ApiClient } from './api-client.js';

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
          .filter((f) => ['.yaml', '.yml', '.json'].includes(extname(f)))
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

const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/**
 * Applies the CRDs (server-side apply, so installing twice is harmless) and waits until
 * each is Established and its resources are served by discovery.
 */
export async function installCustomResourceDefinitions(
  client: ApiClient,
  crds: CustomResourceDefinition[],
  timeoutMs = 30_000,
): Promise<void> {
  for (const crd of crds) {
    const body = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', ...crd };
    await client.request(
      'PATCH',
      `${CRD_PATH}/${crd.metadata.name}?fieldManager=nestor-testing&force=true`,
      body,
      'application/apply-patch+yaml',
    );
  }
  const deadline = Date.now() + timeoutMs;
  for (const crd of crds) {
    for (;;) {
      const current = await client.request<{
        status?: { conditions?: Array<{ type: string; status: string; message?: string }> };
      }>('GET', `${CRD_PATH}/${crd.metadata.name}`);
      const conditions = current.status?.conditions ?? [];
      const established = conditions.some((c) => c.type === 'Established' && c.status === 'True');
      if (established && (await served(client, crd))) break;
      if (Date.now() > deadline) {
        const why = conditions.map((c) => `${c.type}=${c.status}${c.message ? ` (${c.message})` : ''}`).join(', ');
        throw new Error(
          `CRD ${crd.metadata.name} not Established within ${timeoutMs} ms: ${why || 'no conditions yet'}`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function served(client: ApiClient, crd: CustomResourceDefinition): Promise<boolean> {
  for (const version of crd.spec.versions.filter((v) => v.served !== false)) {
    const { status, text } = await client.raw('GET', `/apis/${crd.spec.group}/${version.name}`);
    if (status !== 200) return false;
    const list = JSON.parse(text) as { resources?: Array<{ name: string }> };
    if (!list.resources?.some((r) => r.name === crd.spec.names.plural)) return false;
  }
  return true;
}
