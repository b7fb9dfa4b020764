// A TcpRelay on a thread of its own, for drivers whose main thread does heavy work (LISTs of
// thousands of objects to see what converged): on the main thread each such parse would
// stall every relayed connection, a single HTTP/2 connection's streams most of all, and the
// measurement would be the driver's, not the operator's.
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { TcpRelay } from '@nestor/testing';

if (!isMainThread) {
  const relay = await TcpRelay.start(workerData.target);
  parentPort.postMessage({ port: relay.port });
  parentPort.on('message', async ({ id, op }) => {
    if (op === 'silence') relay.silence();
    if (op === 'close') await relay.close();
    parentPort.postMessage({ id, accepted: relay.accepted });
    if (op === 'close') parentPort.close();
  });
}

/** The relay's interface as the drivers use it (silence, accepted, url, kubeConfig, close), answered by the worker. */
export class ThreadedRelay {
  static async start(target) {
    const worker = new Worker(new URL(import.meta.url), { workerData: { target } });
    const { port } = await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    return new ThreadedRelay(worker, port);
  }

  constructor(worker, port) {
    this.worker = worker;
    this.port = port;
    this.calls = new Map();
    this.nextId = 0;
    /** Connections accepted, as of the last answer from the worker. */
    this.accepted = 0;
    worker.on('message', ({ id, accepted }) => {
      this.accepted = accepted;
      this.calls.get(id)?.();
      this.calls.delete(id);
    });
  }

  get url() {
    return `https://127.0.0.1:${this.port}`;
  }

  /** As TcpRelay.kubeConfig: a copy of the kubeconfig whose current cluster is reached through the relay. */
  kubeConfig(kubeConfig) {
    return TcpRelay.prototype.kubeConfig.call(this, kubeConfig);
  }

  /** Resolves once every open connection is silenced. */
  silence() {
    return this.call('silence');
  }

  /** Refreshes `accepted`. */
  count() {
    return this.call('count');
  }

  async close() {
    await this.call('close');
    await this.worker.terminate();
  }

  call(op) {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.calls.set(id, resolve);
      this.worker.postMessage({ id, op });
    });
  }
}
