// Node test runner global setup (`node --test --test-global-setup=...`): one control plane
// for the whole run, shared by every test file through envtest's own variables, so a
// file's `TestEnvironment.start()` attaches to it instead of starting another.
import { TestEnvironment } from './environment.js';

let environment: TestEnvironment | undefined;

export async function globalSetup(): Promise<void> {
  if (process.env.USE_EXISTING_CLUSTER === 'true') return; // the caller brought a cluster
  const started = Date.now();
  environment = await TestEnvironment.start({ controllerManager: true });
  process.env.USE_EXISTING_CLUSTER = 'true';
  process.env.KUBECONFIG = environment.kubeconfigPath;
  process.env.NESTOR_SHARED_CONTROL_PLANE = 'true';
  process.stderr.write(`[nestor testing] control plane ready at ${environment.server} in ${Date.now() - started} ms\n`);
}

export async function globalTeardown(): Promise<void> {
  await environment?.stop();
}
