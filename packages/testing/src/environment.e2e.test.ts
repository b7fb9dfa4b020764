import assert from 'node:assert/strict';
import { describe, it, after, before } from 'node:test';
import { TestEnvironment } from './environment.js';

describe('shared test environment', () => {
  let env: TestEnvironment;
  before(async () => {
    env = await TestEnvironment.start();
  });
  after(() => env.stop());

  it('attaches to the run-wide control plane', () => {
    assert.equal(env.ownsControlPlane, false);
  });
});
