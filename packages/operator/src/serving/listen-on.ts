import type { Server } from 'node:net';

/**
 * Listens on host:port and resolves with the port bound (port 0: a free one). A port in use
 * or an address that cannot be bound fails start-up with what was to be served there and
 * the option that moves it.
 */
export async function listenOn(
  server: Server,
  host: string,
  port: number,
  /** What is served there, and the option that moves it (with how to turn it off). */
  serves: { what: string; option: string },
): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new Error(
          error.code === 'EADDRINUSE'
            ? `port ${port} for ${serves.what} is in use: set the option ${serves.option}`
            : `cannot serve ${serves.what} on ${host}:${port}: ${error.message}`,
        ),
      ),
    );
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  return typeof address === 'object' && address ? address.port : port;
}
