/**
 * The names the built images carry. Pods and Dockerfiles ask for these exact references, and with
 * no registry a node can only run what was imported under the same name: the skyhook image under
 * the operator's AGENT_IMAGE default, the shellscript package also under NVIDIA's name (so the
 * upstream README demo runs unchanged), and local stand-ins for the public images the Dockerfiles
 * start FROM and the kubelet needs (the pause sandbox, busybox for NodeOps that name no image).
 */
import { SKYHOOK_IMAGE } from '../../templates/nodeop-settings.js';

export const IMAGE_REFS = {
  /** Operator and agent, from the project's Dockerfile; also the sentinel/reboot pod image. */
  skyhook: SKYHOOK_IMAGE,
  /** packages/shellscript under our own name (version from its config.json) … */
  shellscript: 'ghcr.io/skyhook-ts/packages/shellscript:1.1.1',
  /** … and under the name the upstream README demo asks for. */
  shellscriptUpstream: 'ghcr.io/nvidia/skyhook-packages/shellscript:1.1.0',
  /** The Dockerfile's `FROM node:24-bookworm-slim` (build-time only; not exported for nodes). */
  nodeBase: 'docker.io/library/node:24-bookworm-slim',
  busybox: 'docker.io/library/busybox:1.37',
  /** packages/shellscript's `FROM busybox:latest`. */
  busyboxLatest: 'docker.io/library/busybox:latest',
  /** The kubelet's sandbox image (containerd's `sandbox_image`). */
  pause: 'registry.k8s.io/pause:3.10',
} as const;

export type ImageName = keyof typeof IMAGE_REFS;

/** File name of an image's docker-archive in the cache (one tag per archive: buildah writes one). */
export function archiveFileName(name: ImageName): string {
  return `${name}.tar`;
}
