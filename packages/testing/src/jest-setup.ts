// Jest's global setup: `globalSetup: '@nestor/testing/jest-setup'` with
// `globalTeardown: '@nestor/testing/jest-teardown'`. Jest runs it in its parent process
// before it starts the workers, which inherit the variables it sets.
import { startSharedControlPlane } from './shared-control-plane.js';

export default async function jestGlobalSetup(): Promise<void> {
  await startSharedControlPlane();
}
