/**
 * Real nodes for the CLIs (`skyhook cluster`, `skyhook sandbox`): the images they hold (built or
 * taken from the cache by `ensureImages`), the sandbox registry they pull the package images from,
 * the fleet, and the lines that tell a person where each node's root filesystem and logs are.
 *
 * The package images (`ghcr.io/nvidia/skyhook-packages/…`, the project's shellscript) are served
 * by the sandbox registry from the storage `npm run images` pushed them into, and the nodes'
 * containerd pulls them through it as the mirror of ghcr.io, as a cluster pulls from a registry;
 * the images a registry would not hold here (the agent image, busybox, pause) are imported into
 * the nodes' root filesystem from their archives. The registry asks for no credentials: it listens
 * on the machine's loopback only, and the demo's Skyhook names no pull secret.
 */
import { join } from 'node:path';
import type { Logger } from 'pino';
import { ensureImages, type ImageSet } from '../images/ensure-images.js';
import { standInNotice } from '../images/nvidia-packages.js';
import { archivesBesideRegistry, ensureRegistryImages } from '../registry/registry-images.js';
import { startRegistry, type SandboxRegistry } from '../registry/registry.js';
import { startRealNodes, type ControlPlaneForNodes, type RealNodeFleet } from './real-nodes.js';

export interface SandboxRealNodes {
  fleet: RealNodeFleet;
  images: ImageSet;
  registry: SandboxRegistry;
  /** Image references the nodes pull through the registry. */
  pulledImages: string[];
  /** One line per node: name, IP, root filesystem, logs; and one for the registry. */
  describe(): string[];
  /** Stops the nodes, then the registry. */
  stop(options?: { keepDirs?: boolean }): Promise<void>;
}

export async function startSandboxRealNodes(
  cp: ControlPlaneForNodes,
  count: number,
  options: { labels?: Record<string, string>; logger: Logger; say: (message: string) => void },
): Promise<SandboxRealNodes> {
  options.say(`real nodes: making sure the images are built (npm run images; cached after the first run)`);
  const images = await ensureImages({ logger: options.logger });
  const notice = standInNotice(images.nvidiaPackages ?? []);
  if (notice) options.say(`real nodes: ${notice}`);
  const mirror = await ensureRegistryImages(images, { logger: options.logger });
  const pki = { caCert: join(cp.runDir, 'ca.crt'), caKey: join(cp.runDir, 'ca.key') };
  const registry = await startRegistry({ runDir: cp.runDir, pki, storageDir: mirror.storageDir });
  options.say(`real nodes: the sandbox registry at ${registry.host} serves ${mirror.refs.length} package image(s)`);
  let fleet: RealNodeFleet;
  try {
    fleet = await startRealNodes(cp, {
      count,
      images: archivesBesideRegistry(images),
      registryPort: registry.port,
      logger: options.logger,
      onProgress: (m) => options.say(`real nodes: ${m}`),
      ...(options.labels ? { labels: options.labels } : {}),
    });
  } catch (error) {
    await registry.stop();
    throw error;
  }
  return {
    fleet,
    images,
    registry,
    pulledImages: mirror.refs,
    describe: () => [
      ...fleet.nodes.map(
        (n) => `real node ${n.name} (${n.nodeIp}): root filesystem ${n.rootDir}  kubelet/containerd logs ${n.logDir}`,
      ),
      `sandbox registry ${registry.host} (the real nodes' mirror of ghcr.io, docker.io, registry.k8s.io): log ${registry.component.logFile}`,
    ],
    stop: async (stopOptions) => {
      await fleet.stop(stopOptions);
      await registry.stop();
    },
  };
}
