// `nestor-controlplane start`: a control plane kept up for kubectl and a locally running
// operator, what a TestEnvironment is for a test, until Ctrl-C or SIGTERM stops it.
import { ensureControlPlaneBinaries } from './controlplane-binaries.js';
import { TestEnvironment } from './environment.js';

/** Where the command writes; the bin gives the process's streams. */
export interface ControlPlaneIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export const START_OPTIONS = {
  nodes: { type: 'string' },
  crds: { type: 'string', multiple: true },
  'controller-manager': { type: 'boolean' },
  port: { type: 'string' },
} as const;

export interface StartValues {
  nodes?: string;
  crds?: string[];
  'controller-manager'?: boolean;
  port?: string;
}

/** A bad argument of `start`: the message says what is accepted (exit 2, as a parse error). */
class StartArgumentError extends Error {
  readonly code = 'ERR_PARSE_ARGS_START';
}

/** Starts it, prints how to reach it, and resolves with 0 once a signal has stopped it. */
export async function startLocalControlPlane(values: StartValues, io: ControlPlaneIo): Promise<number> {
  const nodes = count(values.nodes, '--nodes', 'the number of fake nodes, e.g. --nodes 3');
  const port = values.port === undefined ? undefined : count(values.port, '--port', 'a port number, e.g. --port 6443');
  if (port !== undefined && (port < 1 || port > 65_535)) {
    throw new StartArgumentError(`--port ${values.port} is not a port: give one from 1 to 65535`);
  }
  const onProgress = (line: string) => io.stderr(`[controlplane] ${line}\n`);

  let signals = 0;
  let stop: () => void = () => {};
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const onSignal = () => {
    signals += 1;
    // A second signal does not wait for the graceful stop (the processes die with this one).
    if (signals > 1) process.exit(130);
    io.stderr('[controlplane] stopping (again to leave at once)\n');
    stop();
  };
  process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
  try {
    const binaries = await ensureControlPlaneBinaries({ nodes: nodes > 0, onProgress });
    // As the shared control plane: with kube-controller-manager when the binaries have one.
    const controllerManager =
      values['controller-manager'] ?? (nodes > 0 || binaries.kubeControllerManager !== undefined);
    const env = await TestEnvironment.start({
      useExistingCluster: false,
      controllerManager,
      ...(nodes > 0 ? { nodes } : {}),
      ...(values.crds?.length ? { crds: values.crds } : {}),
      ...(port !== undefined ? { apiServerPort: port } : {}),
      onProgress,
    });
    try {
      const parts = [
        'etcd',
        'kube-apiserver',
        ...(controllerManager ? ['kube-controller-manager'] : []),
        ...(nodes > 0 ? [`${nodes} fake node${nodes === 1 ? '' : 's'}`] : []),
      ];
      io.stdout(
        `control plane up at ${env.server} (${parts.join(', ')})\n` +
          `  export KUBECONFIG=${env.kubeconfigPath}\n` +
          `  ${binaries.kubectl ?? 'kubectl'} get namespaces\n` +
          'Ctrl-C or SIGTERM stops it and removes its files (the kubeconfig too).\n',
      );
      await stopped;
    } finally {
      await env.stop();
    }
    io.stderr('[controlplane] stopped\n');
    return 0;
  } finally {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
  }
}

function count(value: string | undefined, flag: string, expected: string): number {
  if (value === undefined) return 0;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n))
    throw new StartArgumentError(`${flag} ${value}: give ${expected}`);
  return n;
}
