import { createServer } from 'node:net';

// A port picked free is free when picked, not when the process it is for binds it: between
// the two, another test's process, or an outgoing connection given an ephemeral port, may
// take it (an etcd of the fleet tests, started beside another control plane, once failed
// with "bind: address already in use"). So picks are not repeated within a process, and the
// control plane's processes are started again on new ports when they lose that race
// (onFreePorts).

/** Ports this process handed out, by when: not handed out again for a while. */
const handedOut = new Map<number, number>();
const HELD_MS = 120_000;

/** A port on 127.0.0.1 that nothing listens on right now, and that this process did not hand out lately. */
export async function freePort(): Promise<number> {
  const now = Date.now();
  for (const [port, since] of handedOut) if (now - since > HELD_MS) handedOut.delete(port);
  for (let tries = 0; ; tries++) {
    const port = await anyFreePort();
    if (!handedOut.has(port) || tries >= 20) {
      handedOut.set(port, now);
      return port;
    }
  }
}

function anyFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/**
 * Starts something on ports it picks with the `pick` it is given, and starts it again on new
 * ones when it failed because one of them was taken meanwhile (its error quotes the bind
 * failure on a picked port), up to `attempts` times in all; any other failure is thrown at once.
 */
export async function onFreePorts<T>(
  start: (pick: () => Promise<number>) => Promise<T>,
  pick: () => Promise<number> = freePort,
  attempts = 3,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const picked: number[] = [];
    try {
      return await start(async () => {
        const port = await pick();
        picked.push(port);
        return port;
      });
    } catch (error) {
      const lost = picked.some((port) =>
        String((error as Error).message).includes(`:${port}: bind: address already in use`),
      );
      if (!lost || attempt >= attempts) throw error;
    }
  }
}

/** Fails with a clear message when a port asked for by name is already taken. */
export function assertPortFree(port: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new Error(
          error.code === 'EADDRINUSE'
            ? `port ${port} on 127.0.0.1, asked for the ${what}, is already in use: stop what listens there or leave the port unset to pick a free one`
            : `cannot bind port ${port} on 127.0.0.1 for the ${what}: ${error.message}`,
        ),
      ),
    );
    server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
  });
}
