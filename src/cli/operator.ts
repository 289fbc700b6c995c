/**
 * `skyhook operator`: flags (with the env vars config/manager/manager.yaml sets as defaults), the
 * manager (src/kube/manager.ts), signals and the exit code. SIGTERM/SIGINT → graceful shutdown,
 * exit 0; leadership lost or a controller that cannot start → shutdown, exit 1; an unhandled
 * rejection → log fatal, exit 1 at once (never keep running in an unknown state).
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { OPERATOR_NAMESPACE } from '../api/operator-rbac.js';
import { controllers } from '../controllers/registry.js';
import { errorMessage, loadKubeConfig } from '../kube/client.js';
import { createLogger, isLogLevel, LOG_LEVELS } from '../kube/logger.js';
import { startManager, type BindAddress } from '../kube/manager.js';

/** Upstream Skyhook's lease name, so ours and an upstream operator in the same namespace never both lead. */
export const LEASE_NAME = '3c22c1ae.nvidia.com';

const HELP = `Usage: skyhook operator [options]

Runs the Skyhook and NodeOp controllers while this process holds the leader lease, serves
/healthz and /readyz (ready once every informer has synced) and /metrics.

Options:
  --kubeconfig FILE        kubeconfig to use (default: $KUBECONFIG, then in-cluster, then ~/.kube/config)
  --namespace NS           namespace of the leader-election Lease (default: $NAMESPACE, $POD_NAMESPACE, or ${OPERATOR_NAMESPACE})
  --leader-elect BOOL      elect a leader among replicas (default: $LEADER_ELECTION or true)
  --health-port [HOST:]PORT  /healthz and /readyz (default: $PROBE_PORT or 8081)
  --metrics-port [HOST:]PORT /metrics (default: $METRICS_PORT or 8080)
  --log-level LEVEL        ${LOG_LEVELS.join('|')} (default: $LOG_LEVEL or info)
`;

/** `8080`, `:8080` or `127.0.0.1:8080`; port 0 picks a free port. */
export function parseBindAddress(value: string, flag: string): BindAddress {
  const match = /^(?:(.*):)?(\d+)$/.exec(value.trim());
  const port = Number(match?.[2]);
  if (!match || port > 65535)
    throw new Error(`${flag} must be a port or host:port, e.g. 8080 or :8080, not '${value}'`);
  return match[1] ? { host: match[1], port } : { port };
}

function parseBool(value: string, flag: string): boolean {
  if (/^(true|1|yes)$/i.test(value)) return true;
  if (/^(false|0|no)$/i.test(value)) return false;
  throw new Error(`${flag} must be true or false, not '${value}'`);
}

function options(argv: string[]) {
  const env = process.env;
  const { values } = parseArgs({
    args: argv,
    options: {
      kubeconfig: { type: 'string' },
      namespace: { type: 'string', default: env['NAMESPACE'] || env['POD_NAMESPACE'] || OPERATOR_NAMESPACE },
      'leader-elect': { type: 'string', default: env['LEADER_ELECTION'] || 'true' },
      'health-port': { type: 'string', default: env['PROBE_PORT'] || '8081' },
      'metrics-port': { type: 'string', default: env['METRICS_PORT'] || '8080' },
      'log-level': { type: 'string', default: env['LOG_LEVEL'] || 'info' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const level = values['log-level'];
  if (!isLogLevel(level)) throw new Error(`--log-level must be one of ${LOG_LEVELS.join(', ')}, not '${level}'`);
  return {
    help: values.help,
    kubeconfig: values.kubeconfig,
    namespace: values.namespace,
    leaderElect: parseBool(values['leader-elect'], '--leader-elect'),
    health: parseBindAddress(values['health-port'], '--health-port'),
    metrics: parseBindAddress(values['metrics-port'], '--metrics-port'),
    level,
  };
}

export async function runOperatorCli(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof options>;
  try {
    parsed = options(argv);
  } catch (e) {
    console.error(`skyhook operator: ${errorMessage(e)}\n\n${HELP}`);
    return 2;
  }
  if (parsed.help) {
    console.log(HELP);
    return 0;
  }
  const logger = createLogger({ level: parsed.level, name: 'skyhook-operator' });
  const crash =
    (kind: string) =>
    (e: unknown): void => {
      logger.fatal({ err: e instanceof Error ? e.stack : String(e) }, `${kind}; exiting`);
      process.exit(1);
    };
  process.on('unhandledRejection', crash('unhandled promise rejection'));
  process.on('uncaughtException', crash('uncaught exception'));

  let manager: Awaited<ReturnType<typeof startManager>>;
  try {
    const kc = loadKubeConfig(parsed.kubeconfig);
    const identity = `${process.env['POD_NAME'] || hostname()}_${randomUUID()}`;
    manager = await startManager({
      kc,
      logger,
      namespace: parsed.namespace,
      identity,
      leaderElect: parsed.leaderElect,
      leaseName: LEASE_NAME,
      health: parsed.health,
      metrics: parsed.metrics,
      controllers,
    });
    logger.info(
      {
        identity,
        healthPort: manager.healthPort,
        metricsPort: manager.metricsPort,
        leaderElect: parsed.leaderElect,
        controllers: controllers.map((c) => c.name),
      },
      'operator started',
    );
  } catch (e) {
    logger.fatal({ err: errorMessage(e) }, 'operator could not start');
    return 1;
  }

  const signalled = new Promise<number>((resolveSignal) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      logger.info({ signal }, 'shutting down');
      resolveSignal(0);
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  });
  const code = await Promise.race([signalled, manager.failed]);
  // A hung API call must not hold the pod until SIGKILL: the drain deadline is 20 s, the grace period 30 s.
  setTimeout(() => {
    logger.error('shutdown did not finish in 25 s; exiting anyway');
    process.exit(code);
  }, 25_000).unref();
  await manager.shutdown();
  // Idle keep-alive sockets of the HTTP clients must not hold the process after a clean shutdown.
  setTimeout(() => process.exit(code), 2000).unref();
  return code;
}
