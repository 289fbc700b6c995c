/**
 * Real nodes for the CLIs (`skyhook cluster`, `skyhook sandbox`): the images they hold (built or
 * taken from the cache by `ensureImages`), the fleet, and the lines that tell a person where each
 * node's root filesystem and logs are.
 */
import type { Logger } from 'pino';
import { ensureImages, type ImageSet } from '../images/ensure-images.js';
import { standInNotice } from '../images/nvidia-packages.js';
import { startRealNodes, type ControlPlaneForNodes, type RealNodeFleet } from './real-nodes.js';

export interface SandboxRealNodes {
  fleet: RealNodeFleet;
  images: ImageSet;
  /** One line per node: name, IP, root filesystem, logs. */
  describe(): string[];
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
  const fleet = await startRealNodes(cp, {
    count,
    images,
    logger: options.logger,
    onProgress: (m) => options.say(`real nodes: ${m}`),
    ...(options.labels ? { labels: options.labels } : {}),
  });
  return {
    fleet,
    images,
    describe: () =>
      fleet.nodes.map(
        (n) => `real node ${n.name} (${n.nodeIp}): root filesystem ${n.rootDir}  kubelet/containerd logs ${n.logDir}`,
      ),
  };
}
