import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeClient } from './kube-client.js';

describe('KubeClient', () => {
  it('refuses to be constructed from JavaScript, as it was before it became the interface, and names the class to use', () => {
    const FromJavaScript = KubeClient as unknown as new (transport: unknown) => KubeClient;
    assert.throws(() => new FromJavaScript({}), {
      name: 'TypeError',
      message: /new HttpKubeClient\(transport, options\)/,
    });
  });
});
