import { createServer } from 'node:net';

/** Asks the kernel for a free loopback port. Racy by nature: callers retry a start on EADDRINUSE. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolvePort(port) : reject(new Error('no port assigned'))));
    });
  });
}

/** Distinct free ports; the set check guards against the kernel handing one out twice. */
export async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}
