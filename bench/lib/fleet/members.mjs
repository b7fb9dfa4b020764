// The member clusters of bench/fleet.mjs: a namespace on one of the member API servers,
// a ServiceAccount there with a Role over its Widgets and ConfigMaps only, its token in a
// kubeconfig, and that kubeconfig in a Secret of the management cluster labelled as
// multicluster-runtime's kubeconfig provider (and Nestor's KubeconfigSecrets) expects.
import { parallel } from '@nestor/testing';
import { widgetsPath } from '../common.mjs';

export const SECRET_LABEL = 'sigs.k8s.io/multicluster-runtime-kubeconfig';
const ACCOUNT = 'fleet-operator';

/** Creates what member `name` needs on `env` (namespace, account, `objects` Widgets) and returns its kubeconfig text. */
export async function prepareMember(env, { name, namespace, objects, round, createdNamespaces }) {
  const api = env.client;
  if (!createdNamespaces.has(namespace)) {
    createdNamespaces.add(namespace);
    await api.request('POST', '/api/v1/namespaces', { metadata: { name: namespace } });
    await api.request('POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, { metadata: { name: ACCOUNT } });
    await api.request('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/roles`, {
      metadata: { name: ACCOUNT },
      rules: [
        { apiGroups: ['bench.nestor.dev'], resources: ['widgets'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: ['bench.nestor.dev'], resources: ['widgets/status'], verbs: ['get', 'patch', 'update'] },
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'update'] },
      ],
    });
    await api.request('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`, {
      metadata: { name: ACCOUNT },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: ACCOUNT },
      subjects: [{ kind: 'ServiceAccount', name: ACCOUNT, namespace }],
    });
  }
  await createWidgets(env, namespace, objects, round);
  const { status } = await api.request('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${ACCOUNT}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 4 * 3600 },
  });
  const cluster = env.kubeConfig.getCurrentCluster();
  // JSON is YAML: both frameworks' kubeconfig parsers read it.
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server: cluster.server, 'certificate-authority-data': cluster.caData } }],
    users: [{ name: ACCOUNT, user: { token: status.token } }],
    contexts: [{ name, context: { cluster: name, user: ACCOUNT, namespace } }],
    'current-context': name,
  });
}

/** `count` Widgets w-0..w-<count-1> in `namespace`, on round `round`. */
export async function createWidgets(env, namespace, count, round) {
  await parallel(
    Array.from({ length: count }, (_, i) => `w-${i}`),
    32,
    (name) =>
      env.client.request('POST', widgetsPath(namespace), {
        apiVersion: 'bench.nestor.dev/v1',
        kind: 'Widget',
        metadata: { name },
        spec: { size: 1, round },
      }),
  );
}

/** Moves Widgets w-0..w-<count-1> of `namespace` to round `round` (a spec change: their generation moves). */
export async function bumpWidgets(env, namespace, count, round, concurrency = 32, onEach = () => {}) {
  let done = 0;
  await parallel(
    Array.from({ length: count }, (_, i) => `w-${i}`),
    concurrency,
    async (name) => {
      await bumpWidget(env, namespace, name, round);
      onEach(++done);
    },
  );
}

export function bumpWidget(env, namespace, name, round) {
  return env.client.request('PATCH', widgetsPath(namespace, name), { spec: { round } }, 'application/merge-patch+json');
}

/** The kubeconfig Secret of member `name` in the management cluster's namespace `namespace`. */
export function createSecret(management, namespace, name, kubeconfig) {
  return management.client.request('POST', `/api/v1/namespaces/${namespace}/secrets`, {
    metadata: { name, labels: { [SECRET_LABEL]: 'true' } },
    data: { kubeconfig: Buffer.from(kubeconfig).toString('base64') },
  });
}

export function deleteSecret(management, namespace, name) {
  return management.client.request('DELETE', `/api/v1/namespaces/${namespace}/secrets/${name}`);
}
