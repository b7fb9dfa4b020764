import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertSupportedNode, MINIMUM_NODE_VERSION } from './node-version.js';

describe('assertSupportedNode', () => {
  it('accepts the minimum and newer, refuses older saying which node is needed', () => {
    for (const version of [MINIMUM_NODE_VERSION, '22.20.0', '23.0.0', '24.11.1']) assertSupportedNode(version);
    for (const version of ['20.19.5', '22.18.9', '22.9.0']) {
      assert.throws(
        () => assertSupportedNode(version),
        new RegExp(`needs Node.js 22.19.0 or newer, and this process runs ${version.replaceAll('.', '\\.')}`),
      );
    }
  });
});
