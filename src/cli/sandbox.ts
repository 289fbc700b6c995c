/**
 * `skyhook sandbox` (what `npm start` runs): the whole system on this machine. A local control plane
 * with simulated nodes, our CRDs, the operator (in this process), the simulated host side of
 * interrupts, and a Skyhook applied from a file, with live progress until Ctrl-C.
 */
import { parseArgs } from 'node:util';
import { join, resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { hostname } from 'node:os';
import { parseAllDocuments } from 'yaml';
import type { V1Node } from '@kubernetes/client-node';
import { CHILD_LABELS, GROUP_VERSION, KINDS, TEST_NODE_LABEL } from '../api/names.js';
import type { Skyhook } from '../api/skyhook.js';
import { controllers } from '../controllers/registry.js';
import { Informer } from '../kube/informer.js';
import { apiListWatch, customResourcePath } from '../kube/list-watch.js';
import { createLogger, silentLogger } from '../kube/logger.js';
import { startManager } from '../kube/manager.js';
import { pino } from 'pino';
import { type ControlPlane, startControlPlane, type SimulatedNode } from '../sandbox/control-plane.js';
import { startSimulatedHost } from '../sandbox/simulated-host.js';
import { startSandboxRealNodes, type SandboxRealNodes } from '../sandbox/real-node/sandbox-real-nodes.js';
import { sandboxRenderer } from './sandbox-view.js';
import { parseDurationMs } from '../util/duration.js';
import { waitCrdsEstablished } from '../sandbox/crds-established.js';

const repoRoot = resolve(fileURLToPath(import.meta.url), '../../..');

const HELP = `Usage: skyhook sandbox [--nodes 5] [--demo-nodes 3] [--real-nodes 0] [--pod-duration 1s] [-f FILE] [--keep-logs]

Runs the whole system locally: a control plane with simulated nodes, the CRDs, the operator and
the Skyhook in FILE (default config/samples/demo.yaml), with live progress. Ctrl-C stops everything.

Options:
  --nodes N          simulated nodes (default 5)
  --demo-nodes N     how many of them carry ${TEST_NODE_LABEL}=demo (default 3)
  --real-nodes N     real nodes beside them (kubelet + containerd in namespaces, each with its own
                     root filesystem; Linux, root), all labelled ${TEST_NODE_LABEL}=demo (default 0);
                     they pull the package images through the sandbox registry as their mirror
  --pod-duration D   how long each phase of a simulated stage pod takes (default 1s)
  -f, --file FILE    the Skyhook manifest to apply
  --keep-logs        keep the run directory (component and operator logs) after stopping
`;

function skyhooksIn(file: string): Skyhook[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((doc) => doc.toJS() as Skyhook | null)
    .filter((doc): doc is Skyhook => doc?.kind === KINDS.skyhook.kind && doc.apiVersion === GROUP_VERSION);
}

/** Where to look on the real nodes: their root filesystems (the hosts the packages changed) and the stage logs. */
function realNodeHints(real: SandboxRealNodes): string[] {
  return real.fleet.nodes.flatMap((node) => [
    `real node ${node.name}: its / is ${node.rootDir}`,
    `  ls -la ${node.rootDir}/ ${node.rootDir}/etc/skyhook-demo-motd ${node.rootDir}/skyhook-hello-world 2>/dev/null  (what the demo packages write)`,
    `  kubectl -n skyhook logs -l ${CHILD_LABELS.node}=${node.name} --all-containers --prefix   (the agent's output in each stage Job)`,
    `  kubelet and containerd logs: ${node.logDir}`,
  ]);
}

interface SandboxArgs {
  nodeCount: number;
  demoCount: number;
  realCount: number;
  podDuration: string;
  keepLogs: boolean;
  file: string;
  skyhooks: Skyhook[];
}

/** The checked arguments, or undefined when the user asked for help (printed here). */
function parseSandboxArgs(argv: string[]): SandboxArgs | undefined {
  const { values } = parseArgs({
    args: argv,
    options: {
      nodes: { type: 'string', default: '5' },
      'demo-nodes': { type: 'string', default: '3' },
      'real-nodes': { type: 'string', default: '0' },
      'pod-duration': { type: 'string', default: '1s' },
      file: { type: 'string', short: 'f', default: join(repoRoot, 'config/samples/demo.yaml') },
      'keep-logs': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(HELP);
    return undefined;
  }
  const nodeCount = Number(values.nodes);
  const demoCount = Number(values['demo-nodes']);
  if (!Number.isInteger(nodeCount) || nodeCount < 1)
    throw new Error(`--nodes must be a whole number >= 1, not '${values.nodes}'`);
  if (!Number.isInteger(demoCount) || demoCount < 0 || demoCount > nodeCount)
    throw new Error(`--demo-nodes must be between 0 and --nodes (${nodeCount}), not '${values['demo-nodes']}'`);
  const realCount = Number(values['real-nodes']);
  if (!Number.isInteger(realCount) || realCount < 0)
    throw new Error(`--real-nodes must be a whole number >= 0, not '${values['real-nodes']}'`);
  const file = resolve(values.file);
  const skyhooks = skyhooksIn(file);
  if (skyhooks.length === 0)
    throw new Error(`${file} holds no ${GROUP_VERSION} Skyhook: pass a Skyhook manifest with -f`);
  const { 'pod-duration': podDuration, 'keep-logs': keepLogs } = values;
  return { nodeCount, demoCount, realCount, podDuration, keepLogs, file, skyhooks };
}

type Cleanups = (() => Promise<unknown>)[];

/**
 * CRDs, namespace, real nodes (if asked for), the operator, the simulated host, then the Skyhooks of
 * the file; each started part registers its stop in `cleanups`.
 */
async function startOperatorAndApply(
  cp: ControlPlane,
  args: SandboxArgs,
  say: (message: string) => void,
  cleanups: Cleanups,
): Promise<SandboxRealNodes | undefined> {
  const crds = await cp.kubectl(['apply', '--server-side', '-k', join(repoRoot, 'config/crd')]);
  if (crds.code !== 0) throw new Error(`installing the CRDs failed: ${crds.stderr}`);
  await waitCrdsEstablished(cp, ['crd', '--all']);
  await cp.kubectl(['create', 'namespace', 'skyhook']);
  const operatorLog = join(cp.runDir, 'logs', 'operator.log');
  const logger = createLogger({
    level: 'info',
    destination: pino.destination({ dest: operatorLog, sync: true, mkdir: true }),
  });
  const real =
    args.realCount > 0
      ? await startSandboxRealNodes(cp, args.realCount, { labels: { [TEST_NODE_LABEL]: 'demo' }, logger, say })
      : undefined;
  if (real) {
    cleanups.push(() => real.stop({ keepDirs: args.keepLogs }));
    // Stage Jobs on real nodes run the images the nodes hold (an explicit environment wins).
    process.env.AGENT_IMAGE ||= real.images.agentImage;
    process.env.SENTINEL_IMAGE ||= real.images.sentinelImage;
    for (const line of real.describe()) say(line);
  }
  const manager = await startManager({
    kc: cp.kubeConfig,
    logger,
    namespace: 'skyhook',
    identity: `${hostname()}-sandbox`,
    leaderElect: false,
    leaseName: 'skyhook-sandbox',
    health: { host: '127.0.0.1', port: 0 },
    metrics: { host: '127.0.0.1', port: 0 },
    controllers,
  });
  cleanups.push(() => manager.shutdown());
  const host = await startSimulatedHost(cp.kubeConfig, { logger: silentLogger() });
  cleanups.push(() => host.stop());
  say(`operator running (log: ${operatorLog}); applying ${args.file}`);
  const applied = await cp.kubectl(['apply', '--server-side', '-f', args.file]);
  if (applied.code !== 0) throw new Error(`applying ${args.file} failed: ${applied.stderr}`);
  return real;
}

/** Node and Skyhook informers for the progress view, stopped with the rest. */
function watchSandbox(cp: ControlPlane, cleanups: Cleanups): { nodes: Informer<V1Node>; live: Informer<Skyhook> } {
  const nodes = new Informer<V1Node>(apiListWatch(cp.kubeConfig, '/api/v1/nodes'), {
    resource: 'sandbox-nodes',
    logger: silentLogger(),
  });
  const live = new Informer<Skyhook>(
    apiListWatch(cp.kubeConfig, customResourcePath('skyhook.nvidia.com', 'v1alpha1', KINDS.skyhook.plural)),
    { resource: 'sandbox-skyhooks', logger: silentLogger() },
  );
  nodes.start();
  live.start();
  cleanups.push(async () => Promise.all([nodes.stop(), live.stop()]));
  return { nodes, live };
}

export async function runSandboxCli(argv: string[]): Promise<number> {
  const args = parseSandboxArgs(argv);
  if (!args) return 0;
  const tty = Boolean(process.stdout.isTTY);
  const say = (message: string): void => console.log(tty ? message : `[sandbox] ${message}`);
  const started = Date.now();
  const nodes: SimulatedNode[] = Array.from({ length: args.nodeCount }, (_, i) => ({
    name: `node-${i}`,
    ...(i < args.demoCount ? { labels: { [TEST_NODE_LABEL]: 'demo' } } : {}),
  }));
  const cp = await startControlPlane({
    nodes,
    podDurationMs: parseDurationMs(args.podDuration),
    keepRunDir: args.keepLogs,
    onProgress: (m) => say(`control plane: ${m}`),
  });
  const cleanups: Cleanups = [() => cp.stop()];
  const stopAll = async (): Promise<void> => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  };
  try {
    const real = await startOperatorAndApply(cp, args, say, cleanups);
    const { skyhooks } = args;
    const render = sandboxRenderer({
      skyhooks,
      ...watchSandbox(cp, cleanups),
      tty,
      started,
      say,
      onComplete: () => {
        // The rollout is over: the last picture stays, the rest is kubectl's.
        clearInterval(timer);
        say(
          `${skyhooks.map((s) => s.metadata?.name).join(', ')} complete on every selected node in ${((Date.now() - started) / 1000).toFixed(1)} s`,
        );
        say(`explore with kubectl:\nexport KUBECONFIG=${cp.kubeconfigPath}`);
        for (const line of real ? realNodeHints(real) : []) say(line);
        say('still running; press Ctrl-C to stop');
      },
    });
    const timer = setInterval(render, tty ? 250 : 500);
    cleanups.push(async () => clearInterval(timer));
    await new Promise<void>((resolveStop) => {
      process.once('SIGINT', () => resolveStop());
      process.once('SIGTERM', () => resolveStop());
    });
    say('stopping');
  } finally {
    await stopAll();
  }
  say('stopped');
  return 0;
}
