// A kind whose storage version moves from v1beta1 to v1 under objects stored before, on a
// control plane the test owns (its etcd is read to see each object's stored version).
import { parallel, type TestEnvironment } from '@nestor/testing';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

export interface StoredVersionsCrd {
  metadata: { name: string; uid: string; resourceVersion: string };
  spec: { versions: Array<{ name: string; served: boolean; storage: boolean }> };
  status: { storedVersions: string[] };
}

const version = (name: string, storage: boolean) => ({
  name,
  served: true,
  storage,
  subresources: { status: {} },
  schema: {
    openAPIV3Schema: {
      type: 'object',
      properties: {
        spec: { type: 'object', properties: { size: { type: 'integer' } } },
        status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
  },
});

/** One kind of `group` with objects stored as v1beta1, then v1 made its storage version (same schema, conversion None). */
export class MultiVersionKind {
  readonly crd: string;

  constructor(
    private readonly env: TestEnvironment,
    readonly group: string,
    readonly plural: string,
    readonly kind: string,
  ) {
    this.crd = `${plural}.${group}`;
  }

  path(version: string, namespace?: string, name?: string): string {
    return `/apis/${this.group}/${version}${namespace ? `/namespaces/${namespace}` : ''}/${this.plural}${name ? `/${name}` : ''}`;
  }

  object(version: string, name: string, size = 1): object {
    return { apiVersion: `${this.group}/${version}`, kind: this.kind, metadata: { name }, spec: { size } };
  }

  /** Installs the CRD with v1beta1 alone, and `count` objects spread over `namespaces`. */
  async install(namespaces: string[], count: number): Promise<string[]> {
    const definition = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: this.crd },
      spec: {
        group: this.group,
        scope: 'Namespaced',
        names: {
          plural: this.plural,
          singular: this.kind.toLowerCase(),
          kind: this.kind,
          listKind: `${this.kind}List`,
        },
        versions: [version('v1beta1', true)],
      },
    };
    await this.env.installCRDs([definition]);
    const names = Array.from({ length: count }, (_, i) => `${this.kind.toLowerCase()}-${String(i).padStart(5, '0')}`);
    await parallel(names, 16, (name, i) =>
      this.env.client.request(
        'POST',
        this.path('v1beta1', namespaces[i % namespaces.length]!),
        this.object('v1beta1', name),
      ),
    );
    return names.map((name, i) => `${namespaces[i % namespaces.length]}/${name}`);
  }

  /**
   * Makes v1 the storage version (v1beta1 still served), and waits until the API server
   * stores new writes as v1 (unless `wait: false`: an operator that runs meanwhile sees the change at once).
   */
  async moveStorageToV1(namespace: string, options: { wait?: boolean } = {}): Promise<void> {
    const crd = await this.read();
    await this.env.client.request('PUT', `${CRDS}/${this.crd}`, {
      ...crd,
      spec: { ...crd.spec, versions: [version('v1beta1', false), version('v1', true)] },
    });
    if (options.wait === false) return;
    // The API server serves v1 and rebuilds the kind's storage asynchronously: a write stored as v1 tells it did.
    for (let probe = 0; ; probe++) {
      if (probe > 100) throw new Error(`the API server does not store ${this.crd} as v1 yet`);
      if (probe > 0) await new Promise((resolve) => setTimeout(resolve, 100));
      const name = `storage-probe-${probe}`;
      const created = await this.env.client.raw('POST', this.path('v1', namespace), this.object('v1', name));
      if (created.status === 404) continue; // v1 not served yet
      if (created.status >= 400) throw new Error(`probe ${name}: HTTP ${created.status}: ${created.text}`);
      const [entry] = await this.env.readFromEtcd(`/registry/${this.group}/${this.plural}/${namespace}/${name}`, {
        exact: true,
      });
      await this.env.client.request('DELETE', this.path('v1', namespace, name));
      if (JSON.parse(entry!.value.toString()).apiVersion === `${this.group}/v1`) return;
    }
  }

  read(): Promise<StoredVersionsCrd> {
    return this.env.client.request<StoredVersionsCrd>('GET', `${CRDS}/${this.crd}`);
  }

  /** `namespace/name` -> the apiVersion etcd holds each object in. */
  async storedAs(): Promise<Map<string, string>> {
    const prefix = `/registry/${this.group}/${this.plural}/`;
    const entries = await this.env.readFromEtcd(prefix);
    return new Map(
      entries.map((entry) => [
        entry.key.slice(prefix.length),
        (JSON.parse(entry.value.toString()) as { apiVersion: string }).apiVersion,
      ]),
    );
  }

  /** How many objects etcd holds in each apiVersion. */
  async storedCounts(): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const apiVersion of (await this.storedAs()).values()) counts[apiVersion] = (counts[apiVersion] ?? 0) + 1;
    return counts;
  }

  /** The CRD without v1beta1: an update the API server refuses while v1beta1 is a stored version. */
  async dropV1beta1(): Promise<{ status: number; text: string }> {
    const crd = await this.read();
    return this.env.client.raw('PUT', `${CRDS}/${this.crd}`, {
      ...crd,
      spec: { ...crd.spec, versions: [version('v1', true)] },
    });
  }
}
