/**
 * What the real-node e2e files share: a control plane with simulated nodes, real nodes beside them
 * (kubelet + containerd in namespaces, images built by `npm run images`), and the operator in this
 * process using the built agent and sentinel images. Real-node files run one at a time: the project's
 * jest runner (scripts/jest/runner.cjs) holds a machine-wide lock around each, and each first checks
 * that the machine can run real nodes at all (root, Linux, the namespaces and filesystems used).
 */
import { spawnSync } from 'node:child_process';
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CoreV1Event, V1Node, V1Pod } from '@kubernetes/client-node';
import { STAGE_FAILED_REASON } from '../../src/controllers/skyhook/write/failed-stage-report.js';
import { waitForList } from '../../src/kube/wait.js';
import { CHILD_LABELS } from '../../src/api/names.js';
import { isAlive } from '../../src/sandbox/processes.js';
import { startControlPlane, type SimulatedNode } from '../../src/sandbox/control-plane.js';
import { ensureImages, imageBuildah, type ImageSet } from '../../src/sandbox/images/ensure-images.js';
import { startRealNodes, type RealNodeFleet } from '../../src/sandbox/real-node/real-nodes.js';
import { pushArchive } from '../../src/sandbox/registry/push-images.js';
import { startRegistry, type RegistryCredentials, type SandboxRegistry } from '../../src/sandbox/registry/registry.js';
import type { RealNode } from '../../src/sandbox/real-node/real-node.js';
import {
  kubectlOk,
  prepareSkyhookHarness,
  NAMESPACE,
  type HarnessOptions,
  type SkyhookHarness,
} from './skyhook-harness.js';

export * from './skyhook-harness.js';

export interface RealHarness extends SkyhookHarness {
  fleet: RealNodeFleet;
  images: ImageSet;
  /** The sandbox registry the nodes pull through, when the options asked for one. */
  registry: SandboxRegistry | undefined;
  /** The real nodes by name. */
  node(name: string): RealNode;
}

const LOCK_DIR = '/run/skyhook-ts-real-e2e.lock';

/** What this machine lacks for real nodes, one reason per line; empty when it has everything. */
export function realNodeHostProblems(host: RealNodeHostFacts = realNodeHostFacts()): string[] {
  const problems: string[] = [];
  if (host.platform !== 'linux') return [`real nodes need Linux; this is ${host.platform}`];
  if (host.uid !== 0) problems.push(`real nodes need root (uid 0); this process runs as uid ${host.uid}`);
  for (const tool of host.missingTools)
    problems.push(`${tool} is not on PATH (real nodes use it; install util-linux / iproute2)`);
  for (const ns of host.missingNamespaces)
    problems.push(`the kernel offers no ${ns} namespace (/proc/self/ns/${ns} is missing)`);
  if (!host.overlay)
    problems.push("the kernel has no overlay filesystem (containerd's snapshotter needs it; modprobe overlay)");
  if (!host.cgroupsWritable) problems.push('/sys/fs/cgroup is not writable (real nodes create cgroups there)');
  if (problems.length === 0 && host.unshareError)
    problems.push(`unshare --mount --pid --fork fails here: ${host.unshareError} (a container without CAP_SYS_ADMIN?)`);
  return problems;
}

export interface RealNodeHostFacts {
  platform: string;
  uid: number;
  missingTools: string[];
  missingNamespaces: string[];
  overlay: boolean;
  cgroupsWritable: boolean;
  /** Set when a trial `unshare` of the namespaces a node uses failed. */
  unshareError?: string;
}

function onPath(tool: string): boolean {
  return (process.env.PATH ?? '').split(':').some((dir) => dir && existsSync(join(dir, tool)));
}

export function realNodeHostFacts(): RealNodeHostFacts {
  const uid = process.getuid?.() ?? -1;
  const facts: RealNodeHostFacts = {
    platform: process.platform,
    uid,
    missingTools: ['ip', 'nsenter', 'unshare'].filter((tool) => !onPath(tool)),
    missingNamespaces: ['net', 'mnt', 'pid', 'uts', 'ipc'].filter((ns) => !existsSync(`/proc/self/ns/${ns}`)),
    overlay: existsSync('/proc/filesystems') && /\toverlay$/m.test(readFileSync('/proc/filesystems', 'utf8')),
    cgroupsWritable: canWrite('/sys/fs/cgroup'),
  };
  if (process.platform === 'linux' && uid === 0 && facts.missingTools.length === 0) {
    const trial = spawnSync('unshare', ['--mount', '--pid', '--uts', '--ipc', '--fork', '--kill-child', 'true'], {
      encoding: 'utf8',
      timeout: 10_000,
    });
    if (trial.status !== 0)
      facts.unshareError = (trial.stderr || trial.error?.message || `exit ${trial.status}`).trim();
  }
  return facts;
}

function canWrite(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** Fails at once, with every reason, on a machine that cannot run real nodes. */
export function assertRealNodeHost(): void {
  const problems = realNodeHostProblems();
  if (problems.length > 0) throw new Error(`this machine cannot run real nodes:\n  - ${problems.join('\n  - ')}`);
}

/**
 * Checks the machine can run real nodes, then makes sure this file holds the machine-wide real-node
 * lock. Under the project's jest runner (scripts/jest/runner.cjs) the runner took it before the file
 * started, outside every timeout; only a file run some other way waits for it here.
 */
export async function acquireSerialLock(): Promise<() => void> {
  assertRealNodeHost();
  if (process.env.SKYHOOK_REAL_NODE_LANE === '1') return () => undefined;
  for (;;) {
    try {
      mkdirSync(LOCK_DIR);
      writeFileSync(join(LOCK_DIR, 'owner'), String(process.pid));
      return () => rmSync(LOCK_DIR, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST')
        throw new Error(`cannot create the real-node lock ${LOCK_DIR}: ${(error as Error).message}`);
      let owner = 0;
      try {
        owner = Number(readFileSync(join(LOCK_DIR, 'owner'), 'utf8'));
      } catch {
        /* being written or removed */
      }
      if (owner && !isAlive(owner)) rmSync(LOCK_DIR, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

export interface RealHarnessOptions extends HarnessOptions {
  realNodes: number;
  /** Labels of every real node (e.g. the demo's test-node label). */
  realNodeLabels?: Record<string, string>;
  simulatedNodes?: SimulatedNode[];
  /**
   * Start the sandbox registry (TLS from the sandbox CA, basic auth with these credentials) and make
   * the nodes pull ghcr.io, docker.io and registry.k8s.io images through it; `push` puts image-set
   * archives there under other names (`from`: a ref in the image set, `as`: the name to push).
   */
  registry?: { credentials: RegistryCredentials; push: Array<{ from: string; as: string }> };
}

async function startHarnessRegistry(
  cp: { runDir: string },
  images: ImageSet,
  options: NonNullable<RealHarnessOptions['registry']>,
): Promise<SandboxRegistry> {
  const pki = { caCert: join(cp.runDir, 'ca.crt'), caKey: join(cp.runDir, 'ca.key') };
  const registry = await startRegistry({ runDir: cp.runDir, pki, credentials: options.credentials });
  for (const { from, as } of options.push) {
    const image = images.images.find((candidate) => candidate.ref === from);
    if (!image) throw new Error(`${from} is not in the image set`);
    await pushArchive(imageBuildah(), registry, join(images.dir, image.archive), as);
  }
  return registry;
}

export async function startRealHarness(options: RealHarnessOptions): Promise<RealHarness> {
  const release = await acquireSerialLock();
  const cleanups: (() => Promise<unknown>)[] = [async () => release()];
  const stopAll = async (): Promise<void> => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  };
  try {
    const started = Date.now();
    const images = await ensureImages();
    const imagesMs = Date.now() - started;
    const cp = await startControlPlane({
      nodes: options.simulatedNodes ?? [],
      podDurationMs: options.podDurationMs ?? 250,
    });
    cleanups.push(() => cp.stop());
    const progress: string[] = [
      `images ready in ${(imagesMs / 1000).toFixed(1)} s`,
      `control plane ready in ${(cp.startupMs / 1000).toFixed(1)} s`,
    ];
    const registry = options.registry ? await startHarnessRegistry(cp, images, options.registry) : undefined;
    if (registry) cleanups.push(() => registry.stop());
    const fleet = await startRealNodes(cp, {
      count: options.realNodes,
      ...(registry ? { registryPort: registry.port } : {}),
      images,
      onProgress: (m) => progress.push(m),
      ...(options.realNodeLabels ? { labels: options.realNodeLabels } : {}),
    });
    console.log(`real-node harness: ${progress.join('; ')}`);
    cleanups.push(() => fleet.stop());
    const h = await prepareSkyhookHarness(cp, {
      ...options,
      skyhook: { ...options.skyhook, settings: { agentImage: images.agentImage, ...options.skyhook?.settings } },
      nodeOpSettings: { helperImage: images.sentinelImage, ...options.nodeOpSettings },
    });
    cleanups.push(() => h.stopOperator());
    return {
      ...h,
      fleet,
      images,
      registry,
      node: (name) => {
        const found = fleet.nodes.find((n) => n.name === name);
        if (!found) throw new Error(`no real node ${name}; have ${fleet.nodes.map((n) => n.name).join(', ')}`);
        return found;
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/**
 * Fails, naming each one, unless every package image in `names` (`tuning`, `kdump`, …) was built from
 * NVIDIA's own files: a stand-in would run the project's steps under NVIDIA's name and prove nothing
 * about NVIDIA's package. The fix is NVIDIA's package directories beside the checkout
 * (../shared/upstream-packages), then `npm run images`.
 */
export function requireNvidiaImages(h: RealHarness, names: string[]): void {
  const missing = names.filter((name) => {
    const image = h.images.nvidiaPackages.find((i) => i.name === name);
    return !image || image.standIn;
  });
  if (missing.length > 0)
    throw new Error(
      `NVIDIA's ${missing.join(', ')} image(s) were not built from NVIDIA's files: put NVIDIA's package directories in ../shared/upstream-packages and run \`npm run images\``,
    );
}

/** The current bootID the node reports to the API server. */
export async function reportedBootId(h: SkyhookHarness, node: string): Promise<string> {
  return (await h.core.readNode({ name: node })).status?.nodeInfo?.bootID ?? '';
}

export function isReady(node: V1Node): boolean {
  return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

/** `kubectl logs` of every container of the stage Job pods of `skyhook` on `node`, stage by stage. */
export async function stageLogs(h: SkyhookHarness, skyhook: string, node: string): Promise<Record<string, string>> {
  const pods = (await h.core.listNamespacedPod({ namespace: NAMESPACE })).items.filter(
    (p: V1Pod) =>
      p.spec?.nodeName === node &&
      p.metadata?.labels?.[CHILD_LABELS.name] === skyhook &&
      p.metadata?.ownerReferences?.some((o) => o.kind === 'Job'),
  );
  const logs: Record<string, string> = {};
  for (const pod of pods) {
    for (const container of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
      logs[`${pod.metadata?.name}/${container.name}`] = await kubectlOk(h, [
        '-n',
        NAMESPACE,
        'logs',
        pod.metadata?.name ?? '',
        '-c',
        container.name,
      ]);
    }
  }
  return logs;
}

/**
 * A package image made from the shellscript package's image with `files` over /skyhook-package
 * (e.g. a broken config.json; none: the package unchanged), tagged `ref` and put on `node` as a
 * registry pull would: what a package author publishes, for nodes without a registry.
 */
export async function publishPackageImage(
  h: RealHarness,
  node: string,
  ref: string,
  files: Record<string, string>,
): Promise<void> {
  const base = h.images.archives[h.images.images.findIndex((image) => image.ref === h.images.packageImage)];
  if (!base) throw new Error(`no archive of ${h.images.packageImage} in the image set`);
  const work = mkdtempSync(join(tmpdir(), 'skyhook-package-image-'));
  try {
    const staging = join(work, 'files');
    mkdirSync(staging);
    for (const [name, content] of Object.entries(files)) writeFileSync(join(staging, name), content);
    // The image build's own storage (buildah locks it); the archive pins exactly the set's image.
    const buildah = imageBuildah();
    const container = await buildah.from(`docker-archive:${base}`);
    await buildah.copy(container, staging, '/skyhook-package');
    const id = await buildah.commit(container, ref);
    await buildah.exportArchive(id, ref, join(work, 'image.tar'));
    await h.node(node).importImage(join(work, 'image.tar'));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The StageFailed Event of `skyhook`, once there is one. */
export async function stageFailed(h: RealHarness, skyhook: string): Promise<CoreV1Event> {
  const failed = (e: CoreV1Event): boolean => e.reason === STAGE_FAILED_REASON && e.involvedObject.name === skyhook;
  const events = await waitForList<CoreV1Event>(
    h.cp.kubeConfig,
    '/api/v1/events',
    (all) => all.some(failed),
    180_000,
    `a StageFailed Event on ${skyhook}`,
  );
  return events.find(failed)!;
}
