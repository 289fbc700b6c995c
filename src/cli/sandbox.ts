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
import { selectorMatches } from '../api/label-selector.js';
import { hasInterrupt } from '../controllers/skyhook/plan/package-rules.js';
import { Informer } from '../kube/informer.js';
import { apiListWatch, customResourcePath } from '../kube/list-watch.js';
import { createLogger, silentLogger } from '../kube/logger.js';
import { startManager } from '../kube/manager.js';
import { pino } from 'pino';
import { startControlPlane, type SimulatedNode } from '../sandbox/control-plane.js';
import { nodeLine, overallLine, type ProgressSkyhook } from '../sandbox/progress.js';
import { startSimulatedHost } from '../sandbox/simulated-host.js';
import { startSandboxRealNodes, type SandboxRealNodes } from '../sandbox/real-node/sandbox-real-nodes.js';
import { parseDurationMs } from '../util/duration.js';

const repoRoot = resolve(fileURLToPath(import.meta.url), '../../..');

const HELP = `Usage: skyhook sandbox [--nodes 5] [--demo-nodes 3] [--real-nodes 0] [--pod-duration 1s] [-f FILE] [--keep-logs]

Runs the whole system locally: a control plane with simulated nodes, the CRDs, the operator and
the Skyhook in FILE (default config/samples/demo.yaml), with live progress. Ctrl-C stops everything.

Options:
  --nodes N          simulated nodes (default 5)
  --demo-nodes N     how many of them carry ${TEST_NODE_LABEL}=demo (default 3)
  --real-nodes N     real nodes beside them (kubelet + containerd in namespaces, each with its own
                     root filesystem; Linux, root), all labelled ${TEST_NODE_LABEL}=demo (default 0)
  --pod-duration D   how long each phase of a simulated stage pod takes (default 1s)
  -f, --file FILE    the Skyhook manifest to apply
  --keep-logs        keep the run directory (component and operator logs) after stopping
`;

function skyhooksIn(file: string): Skyhook[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((doc) => doc.toJS() as Skyhook | null)
    .filter((doc): doc is Skyhook => doc?.kind === KINDS.skyhook.kind && doc.apiVersion === GROUP_VERSION);
}

function progressOf(skyhook: Skyhook): ProgressSkyhook {
  const packages = Object.fromEntries(
    Object.entries(skyhook.spec?.packages ?? {}).map(([name, pkg]) => [
      name,
      { version: pkg.version, interrupts: hasInterrupt(pkg, undefined) },
    ]),
  );
  return {
    name: skyhook.metadata?.name ?? '',
    status: skyhook.status?.status,
    completeNodes: skyhook.status?.completeNodes,
    packages,
  };
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

export async function runSandboxCli(argv: string[]): Promise<number> {
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
    return 0;
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

  const tty = Boolean(process.stdout.isTTY);
  const say = (message: string): void => console.log(tty ? message : `[sandbox] ${message}`);
  const started = Date.now();
  const nodes: SimulatedNode[] = Array.from({ length: nodeCount }, (_, i) => ({
    name: `node-${i}`,
    ...(i < demoCount ? { labels: { [TEST_NODE_LABEL]: 'demo' } } : {}),
  }));
  const cp = await startControlPlane({
    nodes,
    podDurationMs: parseDurationMs(values['pod-duration']),
    keepRunDir: values['keep-logs'],
    onProgress: (m) => say(`control plane: ${m}`),
  });
  const cleanups: (() => Promise<unknown>)[] = [() => cp.stop()];
  const stopAll = async (): Promise<void> => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  };
  try {
    const crds = await cp.kubectl(['apply', '--server-side', '-k', join(repoRoot, 'config/crd')]);
    if (crds.code !== 0) throw new Error(`installing the CRDs failed: ${crds.stderr}`);
    await cp.kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
    await cp.kubectl(['create', 'namespace', 'skyhook']);
    const operatorLog = join(cp.runDir, 'logs', 'operator.log');
    const logger = createLogger({
      level: 'info',
      destination: pino.destination({ dest: operatorLog, sync: true, mkdir: true }),
    });
    const real =
      realCount > 0
        ? await startSandboxRealNodes(cp, realCount, { labels: { [TEST_NODE_LABEL]: 'demo' }, logger, say })
        : undefined;
    if (real) {
      cleanups.push(() => real.fleet.stop({ keepDirs: values['keep-logs'] }));
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
    say(`operator running (log: ${operatorLog}); applying ${file}`);
    const applied = await cp.kubectl(['apply', '--server-side', '-f', file]);
    if (applied.code !== 0) throw new Error(`applying ${file} failed: ${applied.stderr}`);

    const nodeInformer = new Informer<V1Node>(apiListWatch(cp.kubeConfig, '/api/v1/nodes'), {
      resource: 'sandbox-nodes',
      logger: silentLogger(),
    });
    const skyhookInformer = new Informer<Skyhook>(
      apiListWatch(cp.kubeConfig, customResourcePath('skyhook.nvidia.com', 'v1alpha1', KINDS.skyhook.plural)),
      { resource: 'sandbox-skyhooks', logger: silentLogger() },
    );
    nodeInformer.start();
    skyhookInformer.start();
    cleanups.push(async () => Promise.all([nodeInformer.stop(), skyhookInformer.stop()]));

    let drawn = 0;
    let lastPlain = new Map<string, string>();
    let announced = false;
    const render = (): void => {
      const lines: string[] = [];
      for (const wanted of skyhooks) {
        const skyhook = skyhookInformer.get(wanted.metadata?.name ?? '') ?? wanted;
        const progress = progressOf(skyhook);
        const selected = nodeInformer
          .list()
          .filter((n) => selectorMatches(skyhook.spec?.nodeSelectors, n.metadata?.labels ?? {}));
        const nodeLines = selected.map((n) =>
          nodeLine({ name: n.metadata?.name ?? '', annotations: n.metadata?.annotations ?? {} }, progress),
        );
        lines.push(overallLine(progress, nodeLines, Date.now() - started), ...nodeLines.map((l) => `  ${l.text}`));
      }
      if (tty) {
        process.stdout.write(`${drawn ? `\x1b[${drawn}A` : ''}${lines.map((l) => `\x1b[2K${l}`).join('\n')}\n`);
        drawn = lines.length;
      } else {
        const next = new Map(
          lines.map((l) => [
            l
              .replace(/\s+[\d.]+ s$/, '')
              .trim()
              .split(/\s+/)[0] ?? l,
            l,
          ]),
        );
        for (const [key, line] of next)
          if (lastPlain.get(key)?.replace(/\s+[\d.]+ s$/, '') !== line.replace(/\s+[\d.]+ s$/, '')) say(line.trim());
        lastPlain = next;
      }
      const done = skyhooks.every((s) => skyhookInformer.get(s.metadata?.name ?? '')?.status?.status === 'complete');
      if (done && !announced) {
        // The rollout is over: the last picture stays, the rest is kubectl's.
        announced = true;
        clearInterval(timer);
        say(
          `${skyhooks.map((s) => s.metadata?.name).join(', ')} complete on every selected node in ${((Date.now() - started) / 1000).toFixed(1)} s`,
        );
        say(`explore with kubectl:\nexport KUBECONFIG=${cp.kubeconfigPath}`);
        for (const line of real ? realNodeHints(real) : []) say(line);
        say('still running; press Ctrl-C to stop');
      }
    };
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
