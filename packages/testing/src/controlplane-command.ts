// `nestor-controlplane`: the binaries @nestor/testing runs, from a shell. Its help and its
// argument errors are answered before anything is resolved, so asking never starts a
// build or waits on another process's build lock.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { parseArgs } from 'node:util';
import { ensureControlPlaneBinaries } from './controlplane-binaries.js';
import { ensureHelm } from './helm-binary.js';
import { ensureOlmValidator } from './olm-validator.js';
import { startLocalControlPlane, START_OPTIONS, type ControlPlaneIo } from './local-control-plane.js';

export const CONTROLPLANE_USAGE = `Usage: nestor-controlplane [fetch] [--controller-manager] [--nodes] [--helm] [--olm] [--quiet]
       nestor-controlplane start [--nodes <n>] [--crds <path>]... [--no-controller-manager]
       nestor-controlplane helm <helm arguments>...

fetch (the default)
  Fetches or builds (once, into ~/.cache/nestor) the binaries @nestor/testing runs, and
  prints where they are: kube-apiserver and etcd, and
    --controller-manager   kube-controller-manager (a Go build: envtest's archives lack it)
    --nodes                kube-scheduler and kwok, for fake nodes
    --helm                 helm v4, for chart tests (a Go build)
    --olm                  operator-framework's bundle validators, for nestor manifests --olm's tests (a Go build)
    --quiet                print nothing but errors

start
  Starts a control plane on this machine and keeps it up for kubectl until Ctrl-C or
  SIGTERM, then stops it and removes its files. Prints the kubeconfig's path.
    --nodes <n>              n fake nodes (kwok): pods are scheduled and run
    --crds <path>            a CRD file or folder (YAML/JSON), installed before
                             kube-controller-manager starts; repeatable
    --no-controller-manager  etcd and kube-apiserver only (no garbage collection)
    --port <port>            the API server's port (default: a free one)

helm
  Runs the helm the chart tests use (NESTOR_HELM, else the cached build, built once when
  missing) with the arguments given, e.g. nestor-controlplane helm lint deploy/chart --strict

  -h, --help               show this help`;

/** Runs the command line; resolves with the exit code (`start` resolves once stopped). */
export async function controlPlaneCommand(argv: string[], io: ControlPlaneIo): Promise<number> {
  const [first, ...rest] = argv;
  // Everything after `helm` is helm's, --help included.
  if (first === 'helm') return runHelm(rest, io);
  if (argv.includes('--help') || argv.includes('-h')) {
    io.stdout(`${CONTROLPLANE_USAGE}\n`);
    return 0;
  }
  try {
    if (first === 'start') {
      const { values } = parseArgs({ args: rest, options: START_OPTIONS, strict: true, allowNegative: true });
      return await startLocalControlPlane(values, io);
    }
    const args = first === 'fetch' ? rest : argv;
    const { values } = parseArgs({
      args,
      options: {
        'controller-manager': { type: 'boolean' },
        nodes: { type: 'boolean' },
        helm: { type: 'boolean' },
        olm: { type: 'boolean' },
        quiet: { type: 'boolean' },
      },
      strict: true,
    });
    return await fetchBinaries(values, io);
  } catch (error) {
    if ((error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.stderr(`nestor-controlplane: ${(error as Error).message} (nestor-controlplane --help lists the options)\n`);
      return 2;
    }
    io.stderr(`[controlplane] ${(error as Error).message}\n`);
    return 1;
  }
}

async function fetchBinaries(
  values: { 'controller-manager'?: boolean; nodes?: boolean; helm?: boolean; olm?: boolean; quiet?: boolean },
  io: ControlPlaneIo,
): Promise<number> {
  const onProgress = (line: string) => io.stderr(`[controlplane] ${line}\n`);
  const binaries = await ensureControlPlaneBinaries({
    controllerManager: values['controller-manager'] ?? false,
    nodes: values.nodes ?? false,
    onProgress,
  });
  const print = (line: string) => values.quiet || io.stdout(`${line}\n`);
  print(`control plane (${binaries.origin}):`);
  print(`  kube-apiserver           ${binaries.kubeApiServer}`);
  print(`  kube-controller-manager  ${binaries.kubeControllerManager ?? '(none)'}`);
  if (binaries.kubeScheduler) print(`  kube-scheduler           ${binaries.kubeScheduler}`);
  print(`  etcd                     ${binaries.etcd}`);
  if (binaries.kwok) print(`  kwok                     ${binaries.kwok}`);
  if (binaries.kubectl) print(`  kubectl                  ${binaries.kubectl}`);
  if (values.helm) print(`  helm                     ${await ensureHelm({ onProgress })}`);
  if (values.olm) print(`  olm-validate             ${await ensureOlmValidator({ onProgress })}`);
  return 0;
}

/** helm with the caller's arguments and streams; its exit code is the command's. */
async function runHelm(args: string[], io: ControlPlaneIo): Promise<number> {
  let helm: string;
  try {
    helm = await ensureHelm({ onProgress: (line) => io.stderr(`[controlplane] ${line}\n`) });
  } catch (error) {
    io.stderr(`[controlplane] ${(error as Error).message}\n`);
    return 1;
  }
  const child = spawn(helm, args, { stdio: 'inherit' });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on('SIGINT', forward).on('SIGTERM', forward);
  try {
    return await new Promise<number>((resolve) => {
      child.on('error', (error) => {
        io.stderr(`[controlplane] cannot run ${helm}: ${error.message}\n`);
        resolve(1);
      });
      child.on('close', (code, signal) => resolve(code ?? 128 + (signal ? constants.signals[signal] : 0)));
    });
  } finally {
    process.off('SIGINT', forward).off('SIGTERM', forward);
  }
}
