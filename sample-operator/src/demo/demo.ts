// `npm run demo`: the sample operator against a local control plane, step by step.
//
// Starts etcd + kube-apiserver + kube-controller-manager + kube-scheduler and three fake
// nodes that kwok runs (TestEnvironment), installs the CRD generated from the decorated
// Memcached class, starts the sample operator in this process, then creates, scales,
// changes and deletes a Memcached, takes a node down and edits the inventory, printing each
// change the operator makes. Every step must converge within a bound.
//
//   node sample-operator/dist/demo/demo.js [--keep] [--verbose]
//     --keep     keep everything running at the end, print a KUBECONFIG and kubectl examples
//     --verbose  also print the operator's debug logs
//   DEMO_STEP_TIMEOUT_MS  the bound on each step (default 30000)
import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { customResourceDefinition } from '@nestor/operator';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { RECORD_LABEL } from '../inventory/inventory.configmap.js';
import { RecordStore, type InventoryRecord } from '../inventory/record-store.js';
import type { ConfigMapObject, DeploymentObject, EventObject, PodObject } from '../kube-types.js';
import { Memcached } from '../memcached/memcached.resource.js';
import { ClusterView } from './cluster-view.js';
import { Terminal } from './terminal.js';

const NAMESPACE = 'demo';
const NAME = 'memcached-sample';
/** Bounds on each step (DEMO_STEP_TIMEOUT_MS raises them on a slow machine). */
const STEP_TIMEOUT_MS = Number(process.env.DEMO_STEP_TIMEOUT_MS) || 30_000;
/** The garbage collector knows the kind from its start (the CRD is installed before it), but deletes in the background. */
const GC_TIMEOUT_MS = STEP_TIMEOUT_MS + 30_000;

const args = new Set(process.argv.slice(2));
const keep = args.has('--keep');
const verbose = args.has('--verbose');
const term = new Terminal();

class StepTimeout extends Error {}

let env: TestEnvironment | undefined;
let starting: Promise<TestEnvironment> | undefined;
let operator: INestApplicationContext | undefined;
let view: ClusterView | undefined;

/** Stops everything this process started, once, then exits. */
let stopping: Promise<never> | undefined;
function shutdown(code: number): Promise<never> {
  stopping ??= (async () => {
    await view?.stop();
    await operator?.close().catch(() => undefined);
    const environment = env ?? (await starting?.catch(() => undefined));
    await environment?.stop();
    process.exit(code);
  })();
  return stopping;
}
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  process.on(signal, () => {
    if (stopping) process.exit(code); // a second Ctrl-C: the control plane dies with us (pdeathsig)
    term.line();
    term.note(`${signal}: stopping the operator and the control plane...`);
    void shutdown(code);
  });
}

// --- the API calls the steps make, as a user would with kubectl ---------------------------

const memcachedPath = `/apis/cache.example.com/v1alpha1/namespaces/${NAMESPACE}/memcacheds`;
const api = () => env!.client;
const getMemcached = () =>
  api()
    .request<Memcached>('GET', `${memcachedPath}/${NAME}`)
    .catch(() => undefined);
const getDeployment = () =>
  api()
    .request<DeploymentObject>('GET', `/apis/apps/v1/namespaces/${NAMESPACE}/deployments/${NAME}`)
    .catch(() => undefined);
const patchMemcached = (spec: Partial<Memcached['spec']>) =>
  api().request('PATCH', `${memcachedPath}/${NAME}`, { spec }, 'application/merge-patch+json');

/** True once the Memcached reports its current generation rolled out: Available, not Progressing. */
async function rolledOut(size: number, port: number): Promise<boolean> {
  const [m, d] = await Promise.all([getMemcached(), getDeployment()]);
  const condition = (type: string) => m?.status?.conditions?.find((c) => c.type === type)?.status;
  const container = d?.spec?.template.spec?.containers[0];
  return (
    m?.status?.observedGeneration === m?.metadata.generation &&
    condition('Available') === 'True' &&
    condition('Progressing') === 'False' &&
    d?.spec?.replicas === size &&
    d?.status?.readyReplicas === size &&
    d?.status?.updatedReplicas === size &&
    d?.status?.replicas === size &&
    container?.ports?.[0]?.containerPort === port
  );
}

/** The Memcached's pods that are not being deleted. */
async function podsOfMemcached(): Promise<PodObject[]> {
  const selector = encodeURIComponent(`app.kubernetes.io/instance=${NAME}`);
  const pods = await api().request<{ items: PodObject[] }>(
    'GET',
    `/api/v1/namespaces/${NAMESPACE}/pods?labelSelector=${selector}`,
  );
  return pods.items.filter((pod) => !pod.metadata?.deletionTimestamp);
}
let lostNode: string | undefined;

async function inventoryMirrors(store: RecordStore): Promise<boolean> {
  const records = await store.list();
  const list = await api().request<{ items: ConfigMapObject[] }>(
    'GET',
    `/api/v1/namespaces/${NAMESPACE}/configmaps?labelSelector=${encodeURIComponent(RECORD_LABEL)}`,
  );
  const actual = new Map(list.items.map((cm) => [cm.metadata?.labels?.[RECORD_LABEL], cm.data?.quantity]));
  return actual.size === records.length && records.every((r) => actual.get(r.id) === String(r.quantity));
}

// --- steps --------------------------------------------------------------------------------

interface Step {
  title: string;
  act?: () => Promise<unknown>;
  until: () => Promise<boolean>;
  what: string;
  timeoutMs?: number;
  /** A line of explanation under the title. */
  note?: string;
}

async function run(steps: Step[], first: number, total: number): Promise<void> {
  for (const [i, step] of steps.entries()) {
    term.step(first + i, total, step.title);
    if (step.note) term.note(step.note);
    const started = Date.now();
    await step.act?.();
    const timeoutMs = step.timeoutMs ?? STEP_TIMEOUT_MS;
    try {
      await waitFor(step.until, { timeoutMs, intervalMs: 100, what: step.what });
    } catch {
      await view?.refresh();
      throw new StepTimeout(
        `step ${first + i}/${total} "${step.title}" did not converge within ${timeoutMs / 1000} s: ${step.what}`,
      );
    }
    await view?.refresh(); // print what the cluster shows before saying it converged
    term.ok(`converged in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
}

async function main(): Promise<void> {
  const began = Date.now();
  term.line(term.paint('Nestor sample operator: Memcached (Operator SDK tutorial) + an inventory poller', 'bold'));
  const total = keep ? 9 : 10;

  term.step(1, total, 'Start a local control plane: etcd, kube-apiserver, kube-controller-manager, kube-scheduler');
  term.note('and three fake nodes that kwok runs: pods are scheduled and go Running and Ready, as on a cluster.');
  // The CRD goes in before kube-controller-manager starts: its garbage collector then knows
  // the kind at once (installed later, it notices a new kind only at its next 30 s resync).
  const crd = customResourceDefinition(Memcached);
  starting = TestEnvironment.start({ useExistingCluster: false, nodes: 3, crds: [crd] });
  env = await starting;
  term.ok(`API server at ${env.server} · nodes ${(await env.nodes.names()).join(', ')}`);

  term.step(2, total, 'The Memcached CRD, generated from @CustomResource/@Field, installed with the control plane');
  await api().request('POST', '/api/v1/namespaces', { metadata: { name: NAMESPACE } });
  // The API server sets up a new kind's storage on its first write (about 2 s): take that
  // here with a dry run, so the steps below time the operator, not the set-up.
  await api().request('POST', `${memcachedPath}?dryRun=All`, {
    apiVersion: 'cache.example.com/v1alpha1',
    kind: 'Memcached',
    metadata: { name: 'warm-up' },
    spec: { size: 1 },
  });
  const spec = crd.spec.versions[0]!.schema.openAPIV3Schema.properties!.spec!.properties!;
  term.ok(
    `${crd.metadata.name} established · spec.size integer ${spec.size!.minimum}..${spec.size!.maximum} · ` +
      `spec.containerPort default ${String(spec.containerPort!.default)}`,
  );

  term.step(3, total, 'Start the sample operator (in this process)');
  // The operator is configured as in production, through its environment (see app.module.ts).
  process.env.KUBECONFIG = env.kubeconfigPath;
  process.env.WATCH_NAMESPACE = NAMESPACE;
  process.env.METRICS_BIND_ADDRESS ??= '0';
  process.env.HEALTH_PROBE_BIND_ADDRESS ??= '0';
  process.env.WEBHOOK_PORT ??= '0'; // the demo installs no webhook configurations and converts nothing
  process.env.INVENTORY_POLL_MS ??= '1000';
  const { AppModule, appOptions } = await import('../app.module.js');
  // The operator's module as main.ts runs it.
  operator = await NestFactory.createApplicationContext(AppModule, {
    logger: term.logger(verbose),
    abortOnError: false,
  });
  const store = operator.get(RecordStore, { strict: false });
  term.ok('operator started: MemcachedController (owns Deployments), InventoryController (@Source poller)');

  view = new ClusterView(env.client, NAMESPACE, term);
  view.start();

  const shirt = (await store.get('sku-1001'))!;
  const poster: InventoryRecord = { id: 'sku-1003', name: 'nestor poster', quantity: 40, warehouse: 'berlin' };
  const steps: Step[] = [
    {
      title: `The inventory poller mirrors the store's records into ConfigMaps (polled every ${appOptions.inventory.pollIntervalMs} ms)`,
      until: () => inventoryMirrors(store),
      what: 'one ConfigMap per inventory record',
    },
    {
      title: `Create Memcached ${NAME} with spec.size 1`,
      act: () =>
        api().request('POST', memcachedPath, {
          apiVersion: 'cache.example.com/v1alpha1',
          kind: 'Memcached',
          metadata: { name: NAME },
          spec: { size: 1 },
        }),
      until: () => rolledOut(1, 11211),
      what: 'a Deployment of 1 ready pod, and Available=True, Progressing=False for generation 1',
    },
    {
      title: 'Scale up: spec.size 1 -> 3',
      act: () => patchMemcached({ size: 3 }),
      until: () => rolledOut(3, 11211),
      what: 'the Deployment at 3 ready pods, and the status for generation 2',
    },
    {
      title: 'Change the spec: containerPort 11211 -> 11311 (a rolling update)',
      act: () => patchMemcached({ containerPort: 11311 }),
      until: () => rolledOut(3, 11311),
      what: '3 ready pods listening on 11311, and the status for generation 3',
    },
    {
      title: 'A node fails (NotReady): its pods are evicted and rescheduled on the other nodes',
      note: 'The node lifecycle controller taints it; the pods tolerate that for 2 s here (300 s by default).',
      act: async () => {
        lostNode = (await podsOfMemcached())[0]?.spec?.nodeName;
        if (!lostNode) return;
        await env!.nodes.notReady(lostNode);
        term.note(`${lostNode} reports NotReady`);
      },
      until: async () =>
        (await rolledOut(3, 11311)) && (await podsOfMemcached()).every((pod) => pod.spec?.nodeName !== lostNode),
      what: `3 ready pods again, none on the lost node`,
    },
    {
      title: 'The inventory changes outside Kubernetes: one record edited, one added, one removed',
      act: async () => {
        store.put({ ...shirt, quantity: 7 });
        store.put(poster);
        store.remove('sku-1002');
      },
      until: () => inventoryMirrors(store),
      what: 'the ConfigMaps to match the inventory again',
    },
  ];
  if (!keep) {
    steps.push({
      title: `Delete Memcached ${NAME}: the finalizer records an Event, the garbage collector removes the Deployment`,
      act: () => api().request('DELETE', `${memcachedPath}/${NAME}`),
      until: async () => {
        const events = await api().request<{ items: EventObject[] }>(
          'GET',
          `/api/v1/namespaces/${NAMESPACE}/events?fieldSelector=involvedObject.kind%3DMemcached`,
        );
        const finalized = events.items.some((e) => e.reason === 'Deleting' && e.involvedObject.name === NAME);
        return finalized && !(await getMemcached()) && !(await getDeployment());
      },
      what: 'the Deleting Event, then the Memcached and its Deployment gone',
      timeoutMs: GC_TIMEOUT_MS,
    });
  }
  await run(steps, 4, total);

  term.line();
  term.line(
    term.paint(`All ${total} steps converged in ${((Date.now() - began) / 1000).toFixed(1)} s.`, 'bold', 'green'),
  );
  if (keep) {
    term.line();
    term.line('Still running; the view above goes on printing changes. Press Ctrl-C to stop. Try:');
    term.line(`  export KUBECONFIG=${env.kubeconfigPath}`);
    term.line(`  kubectl -n ${NAMESPACE} get memcached,deployments,pods,configmaps`);
    term.line(`  kubectl -n ${NAMESPACE} patch memcached ${NAME} --type merge -p '{"spec":{"size":5}}'`);
    term.line(`  kubectl -n ${NAMESPACE} describe memcached ${NAME}`);
    term.line(`  kubectl -n ${NAMESPACE} delete memcached ${NAME}      # runs the finalizer`);
    await new Promise<never>(() => undefined); // until a signal calls shutdown()
  }
}

main().then(
  () => shutdown(0),
  async (error: unknown) => {
    if (stopping) return; // interrupted: shutdown() is under way
    term.line();
    term.fail(
      error instanceof StepTimeout ? error.message : `the demo failed: ${(error as Error).stack ?? String(error)}`,
    );
    process.exitCode = 1;
    await shutdown(1);
  },
);
