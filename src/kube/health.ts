/**
 * The probe server (controller-runtime's convention: `/healthz` and `/readyz` on :8081) on bare
 * node:http, and the small listen/close helper the metrics server shares. Readiness means "every
 * informer has synced" and is deliberately not tied to leadership: a standby replica is ready.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';

export interface ProbeResult {
  ok: boolean;
  /** Said in the body: what is missing when not ok. */
  detail?: string;
}

export type Probe = () => ProbeResult;

export interface RunningServer {
  /** The bound port (useful when 0 was asked for). */
  port: number;
  close(): Promise<void>;
}

/** Listens on `port` (0: any free port) at `host` (default: all interfaces). */
export function startHttpServer(
  port: number,
  host: string | undefined,
  handle: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>,
  logger: Logger,
): Promise<RunningServer> {
  const server: Server = createServer((req, res) => {
    Promise.resolve(handle(req, res)).catch((e: unknown) => {
      logger.error({ url: req.url, err: e instanceof Error ? e.message : String(e) }, 'http handler failed');
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  return new Promise((resolveServer, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const bound = (server.address() as AddressInfo).port;
      resolveServer({
        port: bound,
        close: () =>
          new Promise<void>((resolveClose) => {
            server.close(() => resolveClose());
            server.closeAllConnections();
          }),
      });
    });
  });
}

/** `/healthz` (liveness) and `/readyz` (readiness): 200 `ok` or 503 with the probe's detail. */
export function startHealthServer(options: {
  port: number;
  host?: string;
  healthz: Probe;
  readyz: Probe;
  logger: Logger;
}): Promise<RunningServer> {
  const probes: Record<string, Probe> = { '/healthz': options.healthz, '/readyz': options.readyz };
  return startHttpServer(
    options.port,
    options.host,
    (req, res) => {
      const probe = probes[(req.url ?? '').split('?')[0] ?? ''];
      if (!probe) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /healthz or /readyz\n');
        return;
      }
      const result = probe();
      res
        .writeHead(result.ok ? 200 : 503, { 'content-type': 'text/plain' })
        .end(result.ok ? 'ok\n' : `${result.detail ?? 'not ok'}\n`);
    },
    options.logger,
  );
}
