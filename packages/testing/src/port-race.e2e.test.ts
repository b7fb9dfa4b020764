import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { after, describe, it } from 'node:test';
import { environmentBounds } from './environment-options.js';
import { launchControlPlane, stopControlPlane } from './owned-control-plane.js';
import { freePort } from './ports.js';

// A port picked free may be bound by another process before etcd or the API server binds it
// (an etcd of two control planes started side by side once failed so). Here the race is
// lost on purpose: the first port picked for each is one a server of this test holds.

const held: Server[] = [];
after(() => Promise.all(held.map((server) => new Promise((resolve) => server.close(resolve)))));

async function takenPort(): Promise<number> {
  const server = createServer();
  held.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

describe('a control plane whose picked port is taken before it binds it', () => {
  it('starts etcd and the API server again on new ports', async () => {
    const [forEtcd, forApiServer] = [await takenPort(), await takenPort()];
    const picked: number[] = [];
    // etcd's client port first, then its peer port; then the API server's.
    const script = [forEtcd, undefined, undefined, undefined, forApiServer];
    const pick = async () => {
      const port = script[picked.length] ?? (await freePort());
      picked.push(port);
      return port;
    };
    const launched = await launchControlPlane({ useExistingCluster: false }, environmentBounds({}), pick);
    try {
      const ready = await launched.client.raw('GET', '/readyz');
      assert.equal(ready.status, 200);
      assert.deepEqual(
        [picked.length, picked[0], picked[4]],
        [6, forEtcd, forApiServer],
        'etcd was started twice (two ports each), the API server twice',
      );
      const server = new URL(launched.kubeConfig.getCurrentCluster()!.server);
      assert.equal(Number(server.port), picked[5], 'the API server listens on the port picked after the taken one');
    } finally {
      launched.client.close();
      await stopControlPlane(launched.owned);
    }
  });
});
