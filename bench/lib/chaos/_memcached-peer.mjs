// The controller-runtime peer of the sample operator's Memcached (bench/controller-runtime,
// -mode memcached: memcached.go), as a process with SampleProcess's surface (lines, lineOf,
// kill, tail), configured as the sample is: the kubeconfig, the namespace it watches, and
// the webhook server's port and certificate folder. `binary` is ensureGoOperator()'s.
import { spawn } from 'node:child_process';

export class GoMemcachedProcess {
  constructor(binary, { kubeconfigPath, namespace, webhookPort, webhookCertDir }) {
    this.lines = [];
    const args = ['-mode', 'memcached', '-namespace', namespace];
    args.push('-webhook-port', String(webhookPort), '-webhook-cert-dir', webhookCertDir);
    this.child = spawn(binary, args, {
      env: { ...process.env, KUBECONFIG: kubeconfigPath },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
    for (const stream of [this.child.stdout, this.child.stderr]) {
      let buffered = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk) => {
        buffered += chunk;
        const lines = buffered.split('\n');
        buffered = lines.pop();
        this.lines.push(...lines);
      });
    }
  }

  /** The index of the first line matching, or -1. */
  lineOf(pattern) {
    return this.lines.findIndex((line) => pattern.test(line));
  }

  /** SIGKILL, and the exit. */
  async kill() {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }

  tail(lines = 40) {
    return this.lines.slice(-lines).join('\n');
  }
}
