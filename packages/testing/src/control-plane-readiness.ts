import { sleep } from '@nestor/core';
import type { ApiClient } from './api-client.js';
import type { ControlPlaneProcess } from './process.js';

// Waits of a control plane's start-up: each fails at once, with the process's output, when
// a process it watches exits, and names the variable to raise when time runs out.

/** Polls `ready` until it holds, failing at once with the output of a process that exited. */
export async function waitForProcess(
  proc: ControlPlaneProcess,
  timeoutMs: number,
  ready: () => Promise<boolean>,
): Promise<void> {
  await waitUntil([proc], timeoutMs, ready, `${proc.name} did not become ready`);
}

/** Until the API server answers /readyz with 200. */
export async function waitReady(client: ApiClient, timeoutMs: number, watched: ControlPlaneProcess[]): Promise<void> {
  let last = '';
  await waitUntil(
    watched,
    timeoutMs,
    async () => {
      try {
        const { status, text } = await client.raw('GET', '/readyz', undefined, undefined, 2000);
        last = `HTTP ${status}: ${text.slice(0, 300)}`;
        return status === 200;
      } catch (error) {
        last = (error as Error).message;
        return false;
      }
    },
    `the API server at ${client.server} did not become ready`,
    () => last,
  );
}

export async function waitUntil(
  watched: ControlPlaneProcess[],
  timeoutMs: number,
  ready: () => Promise<boolean>,
  failure: string,
  detail: () => string = () => '',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const dead = watched.find((p) => !p.running);
    if (dead) {
      const { code, signal } = await dead.exited;
      throw new Error(`${dead.name} exited during start-up (${signal ?? `exit code ${code}`}):\n${dead.outputTail()}`);
    }
    if (await ready()) return;
    if (Date.now() > deadline) {
      const tails = watched.map((p) => `--- ${p.name} output:\n${p.outputTail()}`).join('\n');
      throw new Error(
        `${failure} within ${timeoutMs} ms${detail() ? ` (last: ${detail()})` : ''}. Raise KUBEBUILDER_CONTROLPLANE_START_TIMEOUT if the machine is slow.\n${tails}`,
      );
    }
    await sleep(100);
  }
}
