import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { listenOn } from './listen-on.js';

describe('listenOn', () => {
  it('resolves with the port bound, a free one for port 0', async () => {
    const server = createServer();
    try {
      const port = await listenOn(server, '127.0.0.1', 0, { what: '/metrics', option: 'metrics.port' });
      assert.ok(port > 0);
    } finally {
      server.close();
    }
  });

  it('fails on a port in use, naming what was to be served and the option that moves it', async () => {
    const taken = createServer();
    const port = await listenOn(taken, '127.0.0.1', 0, { what: 'first', option: 'x' });
    try {
      await assert.rejects(
        listenOn(createServer(), '127.0.0.1', port, {
          what: 'the webhooks',
          option: 'webhooks.port (0 turns the server off)',
        }),
        new RegExp(
          `^Error: port ${port} for the webhooks is in use: set the option webhooks\\.port \\(0 turns the server off\\)$`,
        ),
      );
    } finally {
      taken.close();
    }
  });
});
