// The parent's side of an operator under test: a child process spoken to by JSON lines
// (bench/operators/protocol.mjs), so its CPU and memory are its own.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const NODE_OPERATORS = {
  nestor: join(here, '..', 'operators', 'nestor.mjs'),
  'nestor-nest': join(here, '..', 'operators', 'nestor-nest.mjs'),
  'nestor-json': join(here, '..', 'operators', 'nestor.mjs'),
  'nestor-fleet': join(here, '..', 'operators', 'nestor-fleet.mjs'),
  'client-node': join(here, '..', 'operators', 'client-node.mjs'),
  apiserver: join(here, '..', 'operators', 'apiserver.mjs'),
};

/**
 * nestor-before and nestor-nest-before: the same operator from another checkout, built
 * (NESTOR_BEFORE=/path/to/checkout), for before/after runs that alternate in one bench run.
 */
function beforeScript(impl) {
  const checkout = process.env.NESTOR_BEFORE;
  if (!checkout) throw new Error(`${impl}: set NESTOR_BEFORE to the checkout (built) to compare with`);
  return join(checkout, 'bench', 'operators', `${impl.replace(/-before$/, '')}.mjs`);
}

/** Every child still running, so that a crash or Ctrl-C of the parent takes them along. */
const live = new Set();
export function killAllChildren() {
  for (const child of live) child.kill('SIGKILL');
}

export class OperatorProcess {
  /**
   * @param impl 'nestor' | 'nestor-json' | 'nestor-nest' | 'client-node' | 'apiserver' | 'controller-runtime' | 'controller-runtime-json'
   *   | 'nestor-before' | 'nestor-nest-before' (NESTOR_BEFORE) | 'nestor-fleet' | 'multicluster-runtime' (bench/fleet.mjs) | 'kube-rs'
   * @param options { kubeconfig, namespace, mode, workers, goBinary, kubeRsBinary, profile (a .cpuprofile path; Node only), nodeFlags (Node only),
   *   script (the Node program instead of bench/operators/<impl>.mjs), extraArgs,
   *   args (the whole argument list instead of --kubeconfig, --namespace, --mode, --workers and extraArgs) }
   */
  static async start(impl, options) {
    const args = options.args ?? [
      '--kubeconfig',
      options.kubeconfig,
      '--namespace',
      options.namespace,
      '--mode',
      options.mode,
      '--workers',
      String(options.workers ?? 8),
      ...(options.extraArgs ?? []),
    ];
    let child;
    if (/^(controller|multicluster)-runtime/.test(impl)) {
      // Go's flag package takes -flag; the Go runtime uses every core (GOMAXPROCS default).
      if (impl === 'controller-runtime-json') args.push('--content-type', 'application/json');
      child = spawn(
        options.goBinary,
        args.map((a) => (a.startsWith('--') ? a.slice(1) : a)),
        { stdio: ['pipe', 'pipe', 'pipe'] },
      );
    } else if (impl === 'kube-rs') {
      // tokio's runtime uses every core, as Go's.
      child = spawn(options.kubeRsBinary, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    } else {
      // A profile covers the measured window only (bench/operators/protocol.mjs).
      if (options.profile) args.push('--profile', options.profile);
      child = spawn(
        process.execPath,
        [
          '--expose-gc',
          ...(options.nodeFlags ?? []),
          options.script ?? (impl.endsWith('-before') ? beforeScript(impl) : NODE_OPERATORS[impl]),
          ...args,
        ],
        {
          stdio: ['pipe', 'pipe', 'pipe'],
          // nestor-json: Nestor with protobuf off (JSON for built-in kinds too).
          env: impl === 'nestor-json' ? { ...process.env, NESTOR_PROTOBUF: 'false' } : process.env,
        },
      );
    }
    const operator = new OperatorProcess(impl, child);
    await operator.next('hello', 60_000);
    return operator;
  }

  constructor(impl, child) {
    this.impl = impl;
    this.child = child;
    this.pid = child.pid;
    this.buffered = [];
    this.waiters = [];
    this.stderr = '';
    live.add(child);
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        live.delete(child);
        this.exitCode = code ?? signal;
        this.rejectAll(new Error(`${impl} exited (${code ?? signal}); stderr: ${this.stderr.slice(-2000)}`));
        resolve();
      }),
    );
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text) => (this.stderr = (this.stderr + text).slice(-20_000)));
    child.stdin.on('error', () => {}); // a child that died: the exit handler reports it
    createInterface({ input: child.stdout }).on('line', (line) => {
      let message;
      try {
        message = JSON.parse(line);
      } catch {
        this.stderr += `[stdout] ${line}\n`;
        return;
      }
      if (message.ev === 'error') {
        this.rejectAll(new Error(`${impl}: ${message.message}`));
        return;
      }
      const waiter = this.waiters.find((w) => w.ev === message.ev);
      if (waiter) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        clearTimeout(waiter.timer);
        waiter.resolve(message);
      } else this.buffered.push(message);
    });
  }

  /** The next message of this type (buffered or to come), or a timeout error. */
  next(ev, timeoutMs = 60_000) {
    const index = this.buffered.findIndex((m) => m.ev === ev);
    if (index >= 0) return Promise.resolve(this.buffered.splice(index, 1)[0]);
    if (this.exitCode !== undefined)
      return Promise.reject(new Error(`${this.impl} has exited: ${this.stderr.slice(-2000)}`));
    return new Promise((resolve, reject) => {
      const waiter = { ev, resolve, reject };
      waiter.timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new Error(`${this.impl}: no "${ev}" within ${timeoutMs} ms; stderr: ${this.stderr.slice(-2000)}`));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  send(command) {
    if (this.exitCode === undefined) this.child.stdin.write(JSON.stringify(command) + '\n');
  }

  /** Sends a command and waits for its answer. */
  async ask(command, ev, timeoutMs = 60_000) {
    const answer = this.next(ev, timeoutMs);
    this.send(command);
    return answer;
  }

  /** Asks it to exit (writing its CPU profile, if any), then kills it after `graceMs`. */
  async stop(graceMs = 15_000) {
    if (this.exitCode !== undefined) return;
    this.send({ cmd: 'exit' });
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  rejectAll(error) {
    for (const waiter of this.waiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
  }
}

/** CPU seconds a process has used so far (utime + stime from /proc), for the control plane. */
export function processCpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks (USER_HZ = 100)
  } catch {
    return NaN;
  }
}

/** RSS and peak RSS (VmHWM) of a process in bytes, from /proc/<pid>/status. */
export function processMemory(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kB = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    // RSS = anonymous (heaps, malloc, stacks) + file-backed (the binary's and libraries' pages, which
    // the kernel can drop and share between processes of one binary) + shared memory.
    return { rss: kB('VmRSS'), maxRss: kB('VmHWM'), anon: kB('RssAnon'), file: kB('RssFile') };
  } catch {
    return { rss: NaN, maxRss: NaN, anon: NaN, file: NaN };
  }
}
