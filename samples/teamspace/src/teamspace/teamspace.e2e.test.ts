// The TeamSpace operator against real control planes: the management cluster (the shared one
// of the test run) holds the TeamSpaces and a kubeconfig Secret per member; two member
// clusters, `east` and `west`, are control planes of their own (with kube-controller-manager's
// namespace controller, so deleted namespaces go). The operator reaches each member as a
// ServiceAccount bound there to memberClusterRole(), with its token inline in the Secret, as
// in production. The test drives the clusters with plain API calls and waits on conditions.
// node:test here (this repository's runner); with Vitest, import describe, it, beforeAll and
// afterAll from 'vitest' instead of the aliases below, and leave the rest as it is.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { after as afterAll, before as beforeAll, describe, it } from 'node:test';
import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  type AsWritten,
  type CoreV1Event,
  customResourceDefinition,
  KubeApiError,
  OperatorModule,
  type V1Namespace,
  type V1RoleBinding,
} from '@nestor/operator';
import { KUBECONFIG_SECRET_LABEL, KubeconfigSecrets } from '@nestor/operator/fleet';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { memberClusterRole } from './member-access.js';
import { NOT_IN_FLEET } from './member-standing.js';
import { type ResourceQuotaObject, TEAMSPACE_LABEL } from './teamspace.objects.js';
import { TeamSpace } from './teamspace.resource.js';
import { TeamSpaceModule } from './teamspace.module.js';

const MEMBERS = ['east', 'west'] as const;
type MemberName = (typeof MEMBERS)[number];
/** The operator's namespace, where its kubeconfig Secrets are (in a pod: POD_NAMESPACE, which the Deployment sets). */
const OPERATOR_NS = 'teamspace-system';
const FLEET_NAMESPACE = OPERATOR_NS;

let management: TestEnvironment;
const members = {} as Record<MemberName, TestEnvironment>;
let app: INestApplicationContext;

const spaces = (name = '') => `/apis/teams.example.com/v1alpha1/teamspaces/${name}`;
const getSpace = (name: string) => management.client.request<TeamSpace>('GET', spaces(name));
const createSpace = (name: string, spec: AsWritten<TeamSpace['spec']>) =>
  management.client.request<TeamSpace>('POST', spaces(), {
    apiVersion: 'teams.example.com/v1alpha1',
    kind: 'TeamSpace',
    metadata: { name },
    spec,
  } satisfies AsWritten<TeamSpace>);
const patchSpec = (name: string, spec: AsWritten<Partial<TeamSpace['spec']>>) =>
  management.client.request<TeamSpace>('PATCH', spaces(name), { spec }, 'application/merge-patch+json');
const inMember = <T>(member: MemberName, path: string) => members[member].client.request<T>('GET', path);
const gone = async (member: MemberName, path: string) => (await members[member].client.raw('GET', path)).status === 404;
const quotaPath = (ns: string) => `/api/v1/namespaces/${ns}/resourcequotas/teamspace`;
const bindingPath = (ns: string) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings/teamspace`;

/** The TeamSpace once its status describes its current generation and `check` holds. */
function settled(name: string, check: (space: TeamSpace) => boolean, what: string, timeoutMs = 30_000) {
  return waitFor(
    async () => {
      const space = await getSpace(name);
      return space.status?.observedGeneration === space.metadata.generation && check(space) && space;
    },
    { timeoutMs, what },
  );
}
const entry = (space: TeamSpace, cluster: string) => space.status?.clusters?.find((c) => c.name === cluster);
const ready = (space: TeamSpace) => space.status?.conditions?.find((c) => c.type === 'Ready')?.status;

/** A ServiceAccount in the member with memberClusterRole(), and a kubeconfig holding its token. */
async function memberKubeconfig(env: TestEnvironment): Promise<string> {
  const post = (path: string, body: unknown) => env.client.request('POST', path, body);
  await post('/api/v1/namespaces', { metadata: { name: OPERATOR_NS } });
  await post(`/api/v1/namespaces/${OPERATOR_NS}/serviceaccounts`, { metadata: { name: 'teamspace-operator' } });
  await post('/apis/rbac.authorization.k8s.io/v1/clusterroles', memberClusterRole());
  await post('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    metadata: { name: 'teamspace-operator' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'teamspace-operator' },
    subjects: [{ kind: 'ServiceAccount', name: 'teamspace-operator', namespace: OPERATOR_NS }],
  });
  const { status } = await env.client.request<{ status: { token: string } }>(
    'POST',
    `/api/v1/namespaces/${OPERATOR_NS}/serviceaccounts/teamspace-operator/token`,
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  );
  const cluster = env.kubeConfig.getCurrentCluster()!;
  // JSON is YAML: the kubeconfig a Secret of multicluster-runtime's kubeconfig provider holds.
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'member', cluster: { server: cluster.server, 'certificate-authority-data': cluster.caData } }],
    users: [{ name: 'teamspace-operator', user: { token: status.token } }],
    contexts: [{ name: 'member', context: { cluster: 'member', user: 'teamspace-operator' } }],
    'current-context': 'member',
  });
}

const kubeconfigs = {} as Record<MemberName, string>;
const putSecret = (member: MemberName) =>
  management.client.request('POST', `/api/v1/namespaces/${FLEET_NAMESPACE}/secrets`, {
    metadata: { name: member, labels: { [KUBECONFIG_SECRET_LABEL]: 'true' } },
    data: { kubeconfig: Buffer.from(kubeconfigs[member]).toString('base64') },
  });

beforeAll(async () => {
  const [shared, east, west] = await Promise.all([
    TestEnvironment.start({ crds: [customResourceDefinition(TeamSpace)] }),
    // Each member: ~400 MB of RSS and a few seconds to start, in parallel (docs/multicluster.md).
    TestEnvironment.start({ useExistingCluster: false, controllerManager: ['namespace'] }),
    TestEnvironment.start({ useExistingCluster: false, controllerManager: ['namespace'] }),
  ]);
  management = shared;
  Object.assign(members, { east: east!, west: west! });
  const created = await management.client.raw('POST', '/api/v1/namespaces', { metadata: { name: FLEET_NAMESPACE } });
  assert.ok([201, 409].includes(created.status), created.text);
  for (const member of MEMBERS) {
    kubeconfigs[member] = await memberKubeconfig(members[member]);
    await putSecret(member);
  }

  // The operator's namespace, as the Deployment `nestor manifests` writes tells it in a pod.
  process.env['POD_NAMESPACE'] = OPERATOR_NS;
  const moduleRef = await Test.createTestingModule({
    imports: [
      OperatorModule.forRoot({
        kubeConfig: management.kubeConfig,
        metrics: { port: 0 }, // several operators run at once: no servers on fixed ports
        health: { port: 0 },
        fleet: {
          // No namespace: the operator's own, as AppModule has it (POD_NAMESPACE, below).
          providers: [new KubeconfigSecrets()],
          retry: { initialMs: 200, maxMs: 2_000 },
          syncTimeoutMs: 10_000,
        },
      }),
      TeamSpaceModule,
    ],
  }).compile();
  app = await moduleRef.init();
});

afterAll(async () => {
  // Delete what is left while the operator runs, so its finalizer is not left behind.
  const left = await management.client
    .request<{ items: TeamSpace[] }>('GET', spaces())
    .catch(() => ({ items: [] as TeamSpace[] }));
  await Promise.all(left.items.map((s) => management.client.raw('DELETE', spaces(s.metadata.name))));
  await waitFor(
    async () => (await management.client.request<{ items: unknown[] }>('GET', spaces())).items.length === 0,
    {
      timeoutMs: 30_000,
      what: 'the TeamSpaces to be deleted',
    },
  ).catch(() => undefined);
  await app?.close();
  for (const member of MEMBERS) {
    await management?.client.raw('DELETE', `/api/v1/namespaces/${FLEET_NAMESPACE}/secrets/${member}`);
  }
  await Promise.all(Object.values(members).map((env) => env?.stop()));
  await management?.stop();
});

describe('TeamSpace operator over two member clusters', () => {
  it('makes the namespace, its ResourceQuota and RoleBinding in both members, and reports each', async () => {
    await createSpace('payments', {
      clusters: ['east', 'west'],
      namespace: 'payments',
      quota: { cpu: '2', memory: '4Gi', pods: 10 },
      access: { groups: ['payments-devs'], users: ['alice'] },
    });
    // A second TeamSpace, in west alone: nothing but west's Secret concerns it from here on.
    await createSpace('search', { clusters: ['west'], namespace: 'search', access: { groups: ['search-devs'] } });
    const space = await settled('payments', (s) => ready(s) === 'True', 'Ready=True in both members', 60_000);
    await settled('search', (s) => ready(s) === 'True', 'search Ready=True in west');
    assert.deepEqual(
      space.status?.clusters?.map((c) => [c.name, c.ready]),
      [
        ['east', true],
        ['west', true],
      ],
    );
    assert.equal(space.spec.access.clusterRole, 'edit', 'the default');
    for (const member of MEMBERS) {
      const ns = await inMember<V1Namespace>(member, '/api/v1/namespaces/payments');
      assert.equal(ns.metadata?.labels?.[TEAMSPACE_LABEL], 'payments');
      const quota = await inMember<ResourceQuotaObject>(member, quotaPath('payments'));
      assert.deepEqual(quota.spec?.hard, { 'requests.cpu': '2', 'requests.memory': '4Gi', pods: '10' });
      const binding = await inMember<V1RoleBinding>(member, bindingPath('payments'));
      assert.equal(binding.roleRef.name, 'edit');
      assert.deepEqual(
        binding.subjects?.map((s) => `${s.kind}:${s.name}`),
        ['Group:payments-devs', 'User:alice'],
      );
    }
  });

  it('puts back what is changed or deleted in a member', async () => {
    await members.east.client.request('DELETE', quotaPath('payments'));
    await members.west.client.request('PATCH', quotaPath('payments'), { spec: { hard: { pods: '1000' } } });
    await members.west.client.request('DELETE', bindingPath('payments'));
    await waitFor(async () => (await inMember<ResourceQuotaObject>('east', quotaPath('payments'))).spec?.hard, {
      what: "east's deleted quota made again",
    });
    await waitFor(
      async () => (await inMember<ResourceQuotaObject>('west', quotaPath('payments'))).spec?.hard?.['pods'] === '10',
      { what: "west's edited quota put back" },
    );
    await waitFor(() => inMember<V1RoleBinding>('west', bindingPath('payments')), {
      what: "west's deleted RoleBinding made again",
    });
  });

  it('replaces the RoleBinding for another ClusterRole, and reports one the operator may not bind', async () => {
    await patchSpec('payments', { access: { clusterRole: 'view', groups: ['payments-devs'], users: ['alice'] } });
    for (const member of MEMBERS) {
      await waitFor(
        async () => (await inMember<V1RoleBinding>(member, bindingPath('payments'))).roleRef.name === 'view',
        {
          what: `the RoleBinding in ${member} to grant view`,
        },
      );
    }
    // memberClusterRole() lets it bind edit and view only: the member's API server refuses the rest.
    await patchSpec('payments', { access: { clusterRole: 'cluster-admin', groups: ['payments-devs'] } });
    const refused = await settled(
      'payments',
      (s) => MEMBERS.every((m) => /403 Forbidden/.test(entry(s, m)?.message ?? '')),
      'both members to refuse the binding',
    );
    assert.equal(ready(refused), 'False');
    assert.match(entry(refused, 'east')!.message, /attempting to grant RBAC permissions not currently held/);
    await patchSpec('payments', { access: { clusterRole: 'edit', groups: ['payments-devs'], users: ['alice'] } });
    await settled('payments', (s) => ready(s) === 'True', 'Ready=True again');
  });

  it('removes the namespace from a member taken out of spec.clusters', async () => {
    await patchSpec('payments', { clusters: ['east'] });
    await waitFor(() => gone('west', '/api/v1/namespaces/payments'), {
      timeoutMs: 60_000,
      what: "west's namespace deleted",
    });
    const space = await settled('payments', (s) => ready(s) === 'True', 'Ready=True with east alone');
    assert.deepEqual(
      space.status?.clusters?.map((c) => c.name),
      ['east'],
    );
    assert.ok(await inMember<V1Namespace>('east', '/api/v1/namespaces/payments'), 'east keeps it');
    await waitFor(
      async () =>
        (await management.client.request<{ items: CoreV1Event[] }>('GET', '/api/v1/events')).items.some(
          (e) => e.involvedObject.name === 'payments' && e.reason === 'NamespaceRemoved',
        ),
      { what: 'a NamespaceRemoved Event on the TeamSpace' },
    );
  });

  it("says so when a member's Secret is removed, and places again when it is back", async () => {
    // Only the fleet's engagements reconcile search now: west disengaged, then engaged again.
    await management.client.request('DELETE', `/api/v1/namespaces/${FLEET_NAMESPACE}/secrets/west`);
    const out = await settled('search', (s) => entry(s, 'west')?.message === NOT_IN_FLEET, 'west out of the fleet');
    assert.equal(entry(out, 'west')?.ready, false);
    assert.equal(ready(out), 'False');
    assert.ok(await inMember<V1Namespace>('west', '/api/v1/namespaces/search'), 'left as it is, out of reach');

    await putSecret('west');
    await settled('search', (s) => entry(s, 'west')?.ready === true, 'west engaged and ready again', 60_000);
  });

  it('removes the namespace from every member when the TeamSpace is deleted', async () => {
    await patchSpec('payments', { clusters: ['east', 'west'] });
    await settled('payments', (s) => ready(s) === 'True', 'west selected again', 60_000);
    await management.client.request('DELETE', spaces('payments'));
    await waitFor(async () => (await management.client.raw('GET', spaces('payments'))).status === 404, {
      what: 'the TeamSpace gone, its finalizer done',
    });
    for (const member of MEMBERS) {
      await waitFor(() => gone(member, '/api/v1/namespaces/payments'), {
        timeoutMs: 60_000,
        what: `${member}'s namespace deleted`,
      });
    }
  });

  it('never takes over a namespace it did not make, and leaves it when the TeamSpace goes', async () => {
    await createSpace('squatter', { clusters: ['east'], namespace: 'default', access: { users: ['mallory'] } });
    const space = await settled('squatter', (s) => entry(s, 'east')?.ready === false, 'east to refuse');
    assert.match(entry(space, 'east')!.message, /namespace default already exists \(not made by a TeamSpace\)/);
    await management.client.request('DELETE', spaces('squatter'));
    await waitFor(async () => (await management.client.raw('GET', spaces('squatter'))).status === 404, {
      what: 'the TeamSpace gone',
    });
    const ns = await inMember<V1Namespace>('east', '/api/v1/namespaces/default');
    assert.equal(ns.metadata?.deletionTimestamp, undefined);
    assert.equal(ns.metadata?.labels?.[TEAMSPACE_LABEL], undefined);
  });

  it('refuses a TeamSpace that binds nobody or names an invalid namespace, saying which field', async () => {
    const nobody = await createSpace('nobody', { clusters: [], namespace: 'nobody', access: {} }).then(
      () => assert.fail('admitted'),
      (e: unknown) => e as KubeApiError,
    );
    assert.ok(nobody instanceof KubeApiError);
    assert.equal(nobody.status, 422);
    assert.match(nobody.detail, /spec\.access: Invalid value: .*name at least one group or user to bind/);

    const invalid = await createSpace('invalid', {
      clusters: [],
      namespace: 'Not_A_Name',
      access: { users: ['a'] },
    }).then(
      () => assert.fail('admitted'),
      (e: unknown) => e as KubeApiError,
    );
    assert.ok(invalid instanceof KubeApiError);
    assert.match(invalid.detail, /spec\.namespace in body should match/);
  });
});
