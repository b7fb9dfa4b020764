// Vitest's global setup: `test: { globalSetup: ['@nestor/testing/vitest-setup'] }`.
// Runs in Vitest's main process before any worker starts; workers inherit the variables
// it sets, so `TestEnvironment.start()` in a test file attaches to the shared control
// plane. The kubeconfig path is also provided as `inject('nestorKubeconfigPath')`.
import { startSharedControlPlane, stopSharedControlPlane } from './shared-control-plane.js';

/** The part of Vitest's TestProject the setup uses (no dependency on Vitest's types). */
export interface VitestProject {
  provide?: (key: string, value: unknown) => void;
}

export async function setup(project?: VitestProject): Promise<void> {
  const shared = await startSharedControlPlane();
  project?.provide?.('nestorKubeconfigPath', shared.kubeconfigPath);
}

export async function teardown(): Promise<void> {
  await stopSharedControlPlane();
}
