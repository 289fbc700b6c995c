/**
 * Carries a real node's API traffic from a unix socket in its directory to the API server on the
 * machine's loopback. The node has its own network namespace, where 127.0.0.1 is its own; a socket
 * file crosses namespaces, and the API server's certificate (made for 127.0.0.1) stays valid.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { rmSync } from 'node:fs';

export interface ApiRelay {
  stop(): Promise<void>;
}

export async function startApiRelay(socketPath: string, apiPort: number): Promise<ApiRelay> {
  rmSync(socketPath, { force: true });
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: apiPort });
    track(client);
    track(upstream);
    client.pipe(upstream).pipe(client);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolveListen());
  });
  server.unref();
  return {
    async stop() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
      rmSync(socketPath, { force: true });
    },
  };
}
