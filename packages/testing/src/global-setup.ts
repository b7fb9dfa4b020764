// node:test's global setup: `node --test --test-global-setup=<path of this file>` (Node
// takes a path there, resolved from the working directory, not a package name). One
// control plane for the run; see shared-control-plane.ts.
import { startSharedControlPlane, stopSharedControlPlane } from './shared-control-plane.js';

export async function globalSetup(): Promise<void> {
  await startSharedControlPlane();
}

export async function globalTeardown(): Promise<void> {
  await stopSharedControlPlane();
}
