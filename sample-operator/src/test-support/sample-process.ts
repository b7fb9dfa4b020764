// The sample operator as `npm start` runs it (dist/main.js in a process of its own), for
// tests and the chaos suite that restart it: its output kept as lines.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../main.js', import.meta.url));
/** The Node the repository pins (node_modules/.bin/node), else the one running this. */
const PINNED_NODE = fileURLToPath(new URL('../../../node_modules/.bin/node', import.meta.url));
const NODE = existsSync(PINNED_NODE) ? PINNED_NODE : process.execPath;

export interface SampleProcessOptions {
  kubeconfigPath: string;
  /** WATCH_NAMESPACE, and where the inventory writes. */
  namespace: string;
  /** The webhook server's port and certificate folder (LocalWebhooks' port and certDir). */
  webhookPort: number;
  webhookCertDir: string;
}

export class SampleProcess {
  readonly lines: string[] = [];
  /** When each line arrived, in ms after the spawn (as `lines`). */
  readonly linesAt: number[] = [];
  readonly exited: Promise<void>;
  private readonly child: ChildProcess;

  constructor(options: SampleProcessOptions) {
    const spawnedAt = performance.now();
    this.child = spawn(NODE, ['--max-semi-space-size=4', '--expose-gc', MAIN], {
      env: {
        ...process.env,
        KUBECONFIG: options.kubeconfigPath,
        WATCH_NAMESPACE: options.namespace,
        WEBHOOK_PORT: String(options.webhookPort),
        WEBHOOK_CERT_PATH: options.webhookCertDir,
        METRICS_BIND_ADDRESS: '0',
        HEALTH_PROBE_BIND_ADDRESS: '0',
        LOG_FORMAT: 'text',
        NO_COLOR: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
    for (const stream of [this.child.stdout!, this.child.stderr!]) {
      let buffered = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        buffered += chunk;
        const lines = buffered.split('\n');
        buffered = lines.pop()!;
        this.lines.push(...lines);
        this.linesAt.push(...lines.map(() => Math.round(performance.now() - spawnedAt)));
      });
    }
  }

  /** The index of the first line matching, or -1. */
  lineOf(pattern: RegExp): number {
    return this.lines.findIndex((line) => pattern.test(line));
  }

  /** How long after the spawn the first line matching arrived, or undefined. */
  msUntil(pattern: RegExp): number | undefined {
    const line = this.lineOf(pattern);
    return line < 0 ? undefined : this.linesAt[line];
  }

  /** SIGKILL, and the exit. */
  async kill(): Promise<void> {
    this.child.kill('SIGKILL');
    await this.exited;
  }

  tail(lines = 40): string {
    return this.lines.slice(-lines).join('\n');
  }
}
