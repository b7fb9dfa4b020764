// What a control plane needs for pods to run on fake nodes: kube-scheduler to place them,
// kwok to play the kubelets (by the stages in kwok-stages.ts), and the controllers and
// timings that make a node's failure take seconds rather than minutes.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FAKE_NODE_ANNOTATION } from './fake-nodes.js';
import { kwokStagesYaml } from './kwok-stages.js';
import { ControlPlaneProcess, type ProcessOptions } from './process.js';

/** Seconds kwok's node Leases last; kwok renews them every quarter of that. */
const NODE_LEASE_SECONDS = 8;

/**
 * kube-controller-manager's controllers for workloads on nodes, added to the environment's:
 * Jobs (and their clean-up), StatefulSets, DaemonSets, node health and the evictions it leads
 * to, PDBs for drains, EndpointSlices for Services.
 */
export const NODE_CONTROLLERS = [
  'node-lifecycle-controller',
  'taint-eviction-controller',
  'pod-garbage-collector-controller',
  'job-controller',
  'cronjob-controller',
  'ttl-after-finished-controller',
  'statefulset-controller',
  'daemonset-controller',
  'disruption-controller',
  'endpointslice-controller',
];

/**
 * The node lifecycle controller's timings: it checks nodes every second and declares one
 * whose Lease has not been renewed for 10 s (kwok renews every 2 s) unreachable; 50 s and
 * 5 s by default. A node kwok reports NotReady is tainted on the next check.
 */
export const NODE_CONTROLLER_MANAGER_FLAGS = [
  '--node-monitor-period=1s',
  '--node-monitor-grace-period=10s',
  '--node-startup-grace-period=10s',
  // Taint one NotReady node after another without the default 10 s between them.
  '--node-eviction-rate=10',
];

/**
 * Pods tolerate a NotReady or unreachable node for 2 s before they are evicted (the
 * DefaultTolerationSeconds admission plugin; 300 s by default), so a node's loss moves its
 * pods within seconds.
 */
export const NODE_API_SERVER_FLAGS = [
  '--default-not-ready-toleration-seconds=2',
  '--default-unreachable-toleration-seconds=2',
];

export interface NodeComponents {
  scheduler: ControlPlaneProcess;
  kwok: ControlPlaneProcess;
}

/** Starts kube-scheduler and kwok against the API server the kubeconfig names. */
export async function startNodeComponents(options: {
  dir: string;
  kubeconfigPath: string;
  kubeScheduler: string;
  kwok: string;
  processOptions: ProcessOptions;
}): Promise<NodeComponents> {
  const { dir, kubeconfigPath, processOptions } = options;
  const scheduler = new ControlPlaneProcess(
    'kube-scheduler',
    options.kubeScheduler,
    [`--kubeconfig=${kubeconfigPath}`, '--leader-elect=false', '--secure-port=0', '--v=0'],
    processOptions,
  );
  const config = join(dir, 'kwok.yaml');
  await writeFile(config, kwokStagesYaml());
  const kwok = new ControlPlaneProcess(
    'kwok',
    options.kwok,
    [
      `--kubeconfig=${kubeconfigPath}`,
      `--config=${config}`,
      '--manage-all-nodes=false',
      `--manage-nodes-with-annotation-selector=${FAKE_NODE_ANNOTATION}=fake`,
      `--node-lease-duration-seconds=${NODE_LEASE_SECONDS}`,
      '--cidr=10.244.0.0/16',
      '--node-ip=10.240.0.1',
    ],
    processOptions,
    // kwok also reads ~/.kwok/kwok.yaml when it exists: a home of its own keeps a user's out.
    { ...process.env, HOME: dir },
  );
  return { scheduler, kwok };
}
