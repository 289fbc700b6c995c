/**
 * A TCP proxy on 127.0.0.1 between one client (an operator's kubeconfig points at it) and the API
 * server, which the chaos suite can cut as a network partition would: while cut, every byte either
 * way is dropped and no close is passed on (the client sees its requests and watches hang, not
 * fail, so only its own timeouts tell it), and new connections are accepted but get nothing.
 * heal() ends the connections that lived through the cut (their TLS streams lost bytes, and the
 * server has given up on them) and forwards new connections again. Nothing sent during the cut
 * ever arrives, so a write the client made while cut off cannot land after the heal.
 */
import { createServer, connect, type Socket } from 'node:net';

export interface TcpProxy {
  /** The proxy's port on 127.0.0.1. */
  port: number;
  cut(): void;
  heal(): void;
  /** Connections forwarded so far (a client that reconnects shows here). */
  connections(): number;
  stop(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream?: Socket;
  /** Lived through a cut: its streams lost bytes, so heal() ends it. */
  broken: boolean;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  let cut = false;
  let forwarded = 0;
  const end = (pair: Pair): void => {
    pair.client.destroy();
    pair.upstream?.destroy();
    pairs.delete(pair);
  };
  const server = createServer((client) => {
    const pair: Pair = { client, broken: cut };
    pairs.add(pair);
    client.on('error', () => undefined);
    client.on('close', () => {
      if (!pair.broken) end(pair);
    });
    if (cut) {
      client.on('data', () => undefined); // dropped; heal() ends the connection
      return;
    }
    forwarded++;
    const upstream = connect(target.port, target.host);
    pair.upstream = upstream;
    upstream.on('error', () => undefined);
    upstream.on('close', () => {
      if (!pair.broken) end(pair);
    });
    client.on('data', (chunk) => {
      if (!pair.broken) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!pair.broken) client.write(chunk);
    });
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolveListen());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no TCP address');
  return {
    port: address.port,
    cut() {
      cut = true;
      for (const pair of pairs) pair.broken = true;
    },
    heal() {
      cut = false;
      for (const pair of [...pairs].filter((p) => p.broken)) end(pair);
    },
    connections: () => forwarded,
    async stop() {
      for (const pair of [...pairs]) end(pair);
      await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
    },
  };
}
