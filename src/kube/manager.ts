/**
 * The operator process's lifecycle, without the CLI: probe and metrics servers, the runtime handed
 * to controllers, leader election, and the shutdown order of reference/ts-operator-ecosystem.md §4:
 * not-ready → queues stop → informers stop → in-flight reconciles drain (deadline) → events flushed
 * → lease released → servers closed. Controllers run only while this process leads.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ControllerFactory, Stoppable } from './runtime.js';
import { errorMessage, makeClients } from './client.js';
import { coreEventSink, EventRecorder } from './events.js';
import { startHealthServer, type RunningServer } from './health.js';
import { LeaderElector } from './leader.js';
import { apiListWatch } from './list-watch.js';
import { RuntimeMetrics, startMetricsServer } from './metrics.js';
import { InformerFactory, type OperatorRuntime } from './runtime.js';

export interface BindAddress {
  host?: string;
  port: number;
}

export interface ManagerOptions {
  kc: KubeConfig;
  logger: Logger;
  /** Namespace of the Lease. */
  namespace: string;
  identity: string;
  leaderElect: boolean;
  leaseName: string;
  health: BindAddress;
  metrics: BindAddress;
  controllers: readonly ControllerFactory[];
  /** How long shutdown waits for reconciles in flight. Default 20 s (under the pod's 30 s grace). */
  drainDeadlineMs?: number;
}

export interface Manager {
  runtime: OperatorRuntime;
  healthPort: number;
  metricsPort: number;
  /** Resolves with the exit code once the manager has asked to stop itself (leadership lost, a controller failed to start). */
  failed: Promise<number>;
  /** The graceful shutdown; safe to call more than once. */
  shutdown(): Promise<void>;
}

/**
 * The probe server (ready once every informer synced, not ready from the start of a shutdown) and
 * the metrics server. If the second cannot start, the first is closed: an open probe port would
 * keep the failed process alive.
 */
async function startServers(
  options: ManagerOptions,
  metrics: RuntimeMetrics,
  informers: InformerFactory,
  shuttingDown: () => boolean,
): Promise<[RunningServer, RunningServer]> {
  const { logger } = options;
  const healthServer = await startHealthServer({
    ...options.health,
    logger,
    healthz: () => ({ ok: true }),
    readyz: () => {
      if (shuttingDown()) return { ok: false, detail: 'shutting down' };
      const missing = informers.unsynced();
      return missing.length === 0 ? { ok: true } : { ok: false, detail: `informers not synced: ${missing.join(', ')}` };
    },
  });
  try {
    return [healthServer, await startMetricsServer({ ...options.metrics, registry: metrics.registry, logger })];
  } catch (e) {
    await healthServer.close();
    throw e;
  }
}

export async function startManager(options: ManagerOptions): Promise<Manager> {
  const { kc, logger, namespace, identity } = options;
  const metrics = new RuntimeMetrics(undefined, { defaults: true });
  const clients = makeClients(kc);
  const informers = new InformerFactory((path) => apiListWatch(kc, path), { logger, metrics });
  const events = new EventRecorder(coreEventSink(clients.core), {
    component: 'skyhook-operator',
    instance: identity,
    logger,
  });
  const runtime: OperatorRuntime = { kc, clients, informers, events, logger, metrics, namespace, identity };

  let shuttingDown = false;
  let fail: (code: number) => void = () => undefined;
  const failed = new Promise<number>((resolveFailed) => (fail = resolveFailed));
  const running: Stoppable[] = [];

  const servers = await startServers(options, metrics, informers, () => shuttingDown);
  const [healthServer, metricsServer] = servers;

  const startControllers = async (): Promise<void> => {
    for (const factory of options.controllers) {
      if (shuttingDown) return;
      try {
        running.push(await factory.start(runtime));
        logger.info({ controller: factory.name }, 'controller running');
      } catch (e) {
        logger.fatal({ controller: factory.name, err: errorMessage(e) }, 'controller failed to start; exiting');
        fail(1);
        return;
      }
    }
  };

  const elector = options.leaderElect
    ? new LeaderElector({
        coordination: clients.coordination,
        namespace,
        name: options.leaseName,
        identity,
        logger,
        metrics,
        onStartedLeading: () => void startControllers(),
        onStoppedLeading: () => fail(1),
        onNewLeader: (leader) => logger.info({ leader }, 'leader observed'),
      })
    : undefined;
  if (elector) {
    elector.run().catch((e: unknown) => {
      logger.fatal({ err: errorMessage(e) }, 'leader election failed; exiting');
      fail(1);
    });
  } else void startControllers();

  let shutdownDone: Promise<void> | undefined;
  const shutdown = async (): Promise<void> => {
    shuttingDown = true;
    const deadline = options.drainDeadlineMs ?? 20_000;
    const drains = running.map((c) => c.stop(deadline)); // each stops its queue before its first await
    await informers.stopAll();
    const drained = await Promise.all(drains);
    if (drained.includes(false))
      logger.warn(
        { deadlineMs: deadline },
        'reconciles still running at the shutdown deadline; the next leader redoes them',
      );
    await events.flush();
    await elector?.stop();
    await Promise.all(servers.map((s) => s.close()));
    logger.info('operator stopped');
  };

  return {
    runtime,
    healthPort: healthServer.port,
    metricsPort: metricsServer.port,
    failed,
    shutdown: () => (shutdownDone ??= shutdown()),
  };
}
