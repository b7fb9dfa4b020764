// Jest's global teardown: stops what jest-setup started (same process, same globalThis).
import { stopSharedControlPlane } from './shared-control-plane.js';

export default async function jestGlobalTeardown(): Promise<void> {
  await stopSharedControlPlane();
}
