/** `skyhook cluster`: a local control plane with simulated (and real) nodes, in the foreground until Ctrl-C. */
import { parseArgs } from 'node:util';
import { startControlPlane } from '../sandbox/control-plane.js';
import { startSimulatedHost } from '../sandbox/simulated-host.js';
import { startSandboxRealNodes, type SandboxRealNodes } from '../sandbox/real-node/sandbox-real-nodes.js';
import { createLogger } from '../kube/logger.js';
import { pino } from 'pino';
import { parseDurationMs } from '../util/duration.js';

const HELP = `Usage: skyhook cluster [--nodes N] [--real-nodes N] [--pod-duration 1s] [--keep-logs]

Starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok on 127.0.0.1 with N
simulated nodes (which also play the host side of reboots and service restarts), and optionally
real nodes (kubelet + containerd + runc in their own namespaces and root filesystem; Linux, root),
prints the KUBECONFIG to use, and runs until Ctrl-C. The binaries come from
\`npm run cluster:build\` (or KUBEBUILDER_ASSETS), the real nodes' images from \`npm run images\`; the
real nodes pull the package images through the sandbox registry (started with them) as their mirror.

Options:
  --nodes N            simulated nodes (default 3)
  --real-nodes N       real nodes real-0 … (default 0); each prints its root filesystem directory
  --pod-duration D     how long each phase of a simulated pod takes (default 1s)
  --keep-logs          keep the run directory (logs, certificates) after stopping
`;

export async function runClusterCli(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      nodes: { type: 'string', default: '3' },
      'real-nodes': { type: 'string', default: '0' },
      'pod-duration': { type: 'string', default: '1s' },
      'keep-logs': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const nodes = Number(values.nodes);
  if (!Number.isInteger(nodes) || nodes < 0) {
    console.error(`--nodes must be a whole number >= 0, not '${values.nodes}'`);
    return 2;
  }
  const realNodes = Number(values['real-nodes']);
  if (!Number.isInteger(realNodes) || realNodes < 0) {
    console.error(`--real-nodes must be a whole number >= 0, not '${values['real-nodes']}'`);
    return 2;
  }
  const log = (message: string): void => console.error(`[cluster] ${message}`);
  const cp = await startControlPlane({
    nodes,
    podDurationMs: parseDurationMs(values['pod-duration']),
    keepRunDir: values['keep-logs'],
    onProgress: log,
  });
  let real: SandboxRealNodes | undefined;
  try {
    if (realNodes > 0)
      real = await startSandboxRealNodes(cp, realNodes, {
        logger: createLogger({ level: 'warn', destination: pino.destination({ dest: 2, sync: true }) }),
        say: log,
      });
  } catch (error) {
    await cp.stop();
    throw error;
  }
  // The simulated nodes also play the host side of interrupts (sentinel, reboot, bootID).
  const host = await startSimulatedHost(cp.kubeConfig);
  console.log(`export KUBECONFIG=${cp.kubeconfigPath}`);
  for (const line of real?.describe() ?? []) log(line);
  if (real)
    log(
      `operator images for real nodes: AGENT_IMAGE=${real.images.agentImage} SENTINEL_IMAGE=${real.images.sentinelImage}`,
    );
  log(`logs: ${cp.runDir}/logs; press Ctrl-C to stop`);
  await new Promise<void>((resolveStop) => {
    const stop = (): void => {
      log('stopping');
      void host
        .stop()
        .then(() => real?.stop({ keepDirs: values['keep-logs'] }))
        .then(() => cp.stop())
        .then(resolveStop);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  log('stopped');
  return 0;
}
