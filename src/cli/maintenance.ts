/**
 * `skyhook maintenance`: the node daemon of node-initiated maintenance (#15), one per node (a
 * DaemonSet on real clusters; one process per simulated node, each with its own host root, in the
 * tests). Flags with the environment a DaemonSet sets as defaults; SIGTERM/SIGINT stop it (exit 0).
 * Its state is on the host and in its Lease, so stopping it at any moment loses nothing.
 */
import { parseArgs } from 'node:util';
import { OPERATOR_NAMESPACE } from '../api/operator-rbac.js';
import { parseDurationMs } from '../util/duration.js';
import { errorMessage, loadKubeConfig } from '../kube/client.js';
import { createLogger, isLogLevel, LOG_LEVELS } from '../kube/logger.js';
import { MaintenanceDaemon } from '../maintenance-daemon/daemon.js';
import { HostFiles } from '../maintenance-daemon/host.js';
import { REBOOT_METHODS } from '../maintenance-daemon/rebooter.js';
import { inHostNamespaces } from '../templates/interrupt-plan.js';

const HELP = `Usage: skyhook maintenance [options]
       skyhook maintenance status|release ...   (kubectl skyhook maintenance: see skyhook maintenance status --help)

The node daemon of MaintenancePolicies: watches the host for Kustodian's /var/maintenance-required
and Kured's /var/run/reboot-required (paths from the policy serving the node), asks the operator
for a slot, and runs the protocol once the node is cordoned and drained.

Options:
  --node NAME              this node (default: $NODE_NAME)
  --host-root DIR          where the host's / is mounted (default: $HOST_ROOT or /host)
  --namespace NS           namespace of the maintenance Leases, the operator's (default: $POD_NAMESPACE or ${OPERATOR_NAMESPACE})
  --period DURATION        how often the host is looked at (default: 10s)
  --heartbeat DURATION     how often the Lease is renewed; lockTTL counts from it (default: 10s)
  --reboot-method NAME     ${Object.keys(REBOOT_METHODS).join('|')}; none: serve no reboot requests (default: $REBOOT_METHOD or none)
  --required-path PATH     overrides the policy's protocols.maintenance.requiredPath
  --in-progress-path PATH  overrides the policy's protocols.maintenance.inProgressPath
  --reboot-sentinel PATH   overrides the policy's protocols.reboot.sentinelPath
  --kubeconfig FILE        kubeconfig to use (default: $KUBECONFIG, then in-cluster, then ~/.kube/config)
  --log-level LEVEL        ${LOG_LEVELS.join('|')} (default: $LOG_LEVEL or info)
`;

function options(argv: string[]) {
  const env = process.env;
  const { values } = parseArgs({
    args: argv,
    options: {
      node: { type: 'string', default: env['NODE_NAME'] ?? '' },
      'host-root': { type: 'string', default: env['HOST_ROOT'] || '/host' },
      namespace: { type: 'string', default: env['POD_NAMESPACE'] || OPERATOR_NAMESPACE },
      period: { type: 'string', default: '10s' },
      heartbeat: { type: 'string', default: '10s' },
      'reboot-method': { type: 'string', default: env['REBOOT_METHOD'] || 'none' },
      'required-path': { type: 'string' },
      'in-progress-path': { type: 'string' },
      'reboot-sentinel': { type: 'string' },
      kubeconfig: { type: 'string' },
      'log-level': { type: 'string', default: env['LOG_LEVEL'] || 'info' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const level = values['log-level'];
  if (!isLogLevel(level)) throw new Error(`--log-level must be one of ${LOG_LEVELS.join(', ')}, not '${level}'`);
  if (!values.help && !values.node) throw new Error('--node (or $NODE_NAME) is required');
  const method = values['reboot-method'];
  if (method !== 'none' && !REBOOT_METHODS[method])
    throw new Error(`--reboot-method must be one of none, ${Object.keys(REBOOT_METHODS).join(', ')}, not '${method}'`);
  const periodMs = parseDurationMs(values.period);
  const heartbeatMs = parseDurationMs(values.heartbeat);
  if (periodMs <= 0 || heartbeatMs <= 0) throw new Error('--period and --heartbeat must be above 0');
  return {
    help: values.help,
    node: values.node,
    hostRoot: values['host-root'],
    namespace: values.namespace,
    periodMs,
    heartbeatMs,
    method,
    overrides: {
      ...(values['required-path'] ? { requiredPath: values['required-path'] } : {}),
      ...(values['in-progress-path'] ? { inProgressPath: values['in-progress-path'] } : {}),
      ...(values['reboot-sentinel'] ? { rebootSentinel: values['reboot-sentinel'] } : {}),
    },
    kubeconfig: values.kubeconfig,
    level,
  };
}

export async function runMaintenanceCli(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof options>;
  try {
    parsed = options(argv);
  } catch (e) {
    console.error(`skyhook maintenance: ${errorMessage(e)}\n\n${HELP}`);
    return 2;
  }
  if (parsed.help) {
    console.log(HELP);
    return 0;
  }
  const logger = createLogger({ level: parsed.level }).child({ node: parsed.node });
  const host = new HostFiles(parsed.hostRoot);
  const makeRebooter = parsed.method === 'none' ? undefined : REBOOT_METHODS[parsed.method];
  const daemon = new MaintenanceDaemon({
    kc: loadKubeConfig(parsed.kubeconfig),
    node: parsed.node,
    namespace: parsed.namespace,
    host,
    periodMs: parsed.periodMs,
    heartbeatMs: parsed.heartbeatMs,
    ...(makeRebooter ? { rebooter: makeRebooter({ host }) } : {}),
    // On a real host (the host reboot method), the sentinel command runs there too, as the reboot does.
    ...(parsed.method === 'host' ? { onHost: inHostNamespaces } : {}),
    overrides: parsed.overrides,
    logger,
  });
  await daemon.start();
  logger.info({ hostRoot: parsed.hostRoot, rebootMethod: parsed.method }, 'maintenance daemon started');
  await new Promise<void>((resolveSignal) => {
    process.once('SIGTERM', resolveSignal);
    process.once('SIGINT', resolveSignal);
  });
  await daemon.stop();
  return 0;
}
