import { DEFAULT_FIELD_MANAGER } from './defaults.js';
import { servedResources } from './discovery.js';
import { KubeApiError } from './errors.js';
import { silentLogger, type RuntimeLogger } from './logger.js';
import { sleep } from './sleep.js';
import type { Transport } from './transport.js';

/** A CRD as the installer takes it: a generated one, or any apiextensions.k8s.io/v1 object. */
export interface InstallableCustomResourceDefinition {
  metadata: { name: string };
  spec: {
    group: string;
    names: { plural: string };
    versions: ReadonlyArray<{ name: string; served?: boolean }>;
  };
}

export interface InstallCustomResourcesOptions {
  /** Field manager of the server-side apply (default 'nestor'). */
  fieldManager?: string;
  /** Bound on the wait until every CRD is Established and served (default 60 s). */
  timeoutMs?: number;
  /** Pause between checks (default 100 ms). */
  intervalMs?: number;
  signal?: AbortSignal;
  logger?: RuntimeLogger;
}

const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

interface CrdCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/**
 * Installs CRDs for development and tests: server-side applies each (force, so it takes
 * over fields another manager set, and installing twice changes nothing), then waits until
 * every one is Established and discovery lists its resource in each served version, so
 * watches started right after do not meet a 404. In production, apply the CRDs that
 * `nestor manifests` writes instead: an operator should not need rights on CRDs.
 */
export async function installCustomResourceDefinitions(
  transport: Pick<Transport, 'json'>,
  crds: readonly InstallableCustomResourceDefinition[],
  options: InstallCustomResourcesOptions = {},
): Promise<void> {
  const fieldManager = options.fieldManager ?? DEFAULT_FIELD_MANAGER;
  const log = options.logger ?? silentLogger;
  for (const crd of crds) {
    const name = crd.metadata.name;
    try {
      await transport.json('PATCH', `${CRD_PATH}/${encodeURIComponent(name)}`, {
        body: { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', ...crd },
        contentType: 'application/apply-patch+yaml',
        query: { fieldManager, force: true },
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (error) {
      throw new Error(installFailure(name, error), { cause: error });
    }
    log.info(`applied CustomResourceDefinition ${name}`);
  }
  const timeoutMs = options.timeoutMs ?? 60_000;
  const deadline = Date.now() + timeoutMs;
  await Promise.all(crds.map((crd) => waitUntilServed(transport, crd, deadline, timeoutMs, options)));
}

function installFailure(name: string, error: unknown): string {
  const detail = error instanceof Error ? error.message : String(error);
  if (error instanceof KubeApiError && error.status === 403) {
    return (
      `cannot install the CustomResourceDefinition ${name}: the operator's identity may not patch customresourcedefinitions (${detail}). ` +
      'installCustomResources is for development: apply the CRDs with `nestor manifests` and `kubectl apply`, or grant the rights'
    );
  }
  if (error instanceof KubeApiError && error.status === 422) {
    return `the API server refused the CustomResourceDefinition ${name} as invalid: ${detail}`;
  }
  return `cannot install the CustomResourceDefinition ${name}: ${detail}`;
}

async function waitUntilServed(
  transport: Pick<Transport, 'json'>,
  crd: InstallableCustomResourceDefinition,
  deadline: number,
  timeoutMs: number,
  options: InstallCustomResourcesOptions,
): Promise<void> {
  const name = crd.metadata.name;
  const versions = crd.spec.versions.filter((v) => v.served !== false).map((v) => v.name);
  for (;;) {
    options.signal?.throwIfAborted();
    const current = await transport.json<{ status?: { conditions?: CrdCondition[] } }>(
      'GET',
      `${CRD_PATH}/${encodeURIComponent(name)}`,
    );
    const conditions = current.status?.conditions ?? [];
    const names = conditions.find((c) => c.type === 'NamesAccepted');
    if (names?.status === 'False') {
      throw new Error(
        `the CustomResourceDefinition ${name} was not accepted: ${names.reason ?? 'NamesAccepted=False'}: ${names.message ?? ''}`,
      );
    }
    const established = conditions.some((c) => c.type === 'Established' && c.status === 'True');
    const missing = established ? await unserved(transport, crd.spec.group, crd.spec.names.plural, versions) : versions;
    if (established && missing.length === 0) return;
    const last = established
      ? `Established, but discovery does not list ${crd.spec.names.plural} in ${missing.map((v) => `${crd.spec.group}/${v}`).join(', ')} yet`
      : conditions.map((c) => `${c.type}=${c.status}${c.message ? ` (${c.message})` : ''}`).join(', ') ||
        'no conditions yet';
    if (Date.now() >= deadline) {
      throw new Error(
        `the CustomResourceDefinition ${name} was not Established and served within ${timeoutMs} ms: ${last}`,
      );
    }
    await sleep(options.intervalMs ?? 100, options.signal);
  }
}

/** The versions whose discovery document does not list the resource yet. */
async function unserved(
  transport: Pick<Transport, 'json'>,
  group: string,
  plural: string,
  versions: string[],
): Promise<string[]> {
  const missing: string[] = [];
  for (const version of versions) {
    const served = await servedResources(transport, `${group}/${version}`);
    if (!served?.has(plural)) missing.push(version);
  }
  return missing;
}
