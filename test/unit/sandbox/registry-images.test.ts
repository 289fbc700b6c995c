/** Which images of a set the sandbox registry holds, and what real nodes pulling through it still import. */
import { describe, expect, it } from '@jest/globals';
import type { ImageSet } from '../../../src/sandbox/images/ensure-images.js';
import {
  archivesBesideRegistry,
  registryImages,
  registryStorageDir,
} from '../../../src/sandbox/registry/registry-images.js';

const image = (ref: string, archive: string): ImageSet['images'][number] => ({ ref, archive, bytes: 1 });

const set: ImageSet = {
  key: '0123456789abcdef',
  dir: '/cache/images/0123456789abcdef',
  archives: [],
  agentImage: 'ghcr.io/skyhook-ts/skyhook:0.1.0',
  packageImage: 'ghcr.io/skyhook-ts/packages/shellscript:1.1.1',
  upstreamPackageImage: 'ghcr.io/nvidia/skyhook-packages/shellscript:1.1.0',
  pauseImage: 'registry.k8s.io/pause:3.10',
  sentinelImage: 'ghcr.io/skyhook-ts/skyhook:0.1.0',
  busyboxImage: 'docker.io/library/busybox:1.37',
  nvidiaPackages: [
    {
      name: 'tuning',
      ref: 'ghcr.io/nvidia/skyhook-packages/tuning:1.1.4',
      archive: 'nvidia-tuning.tar',
      standIn: false,
    },
  ],
  images: [
    image('ghcr.io/skyhook-ts/skyhook:0.1.0', 'skyhook.tar'),
    image('ghcr.io/skyhook-ts/packages/shellscript:1.1.1', 'shellscript.tar'),
    image('ghcr.io/nvidia/skyhook-packages/shellscript:1.1.0', 'shellscriptUpstream.tar'),
    image('docker.io/library/busybox:1.37', 'busybox.tar'),
    image('registry.k8s.io/pause:3.10', 'pause.tar'),
    image('ghcr.io/nvidia/skyhook-packages/tuning:1.1.4', 'nvidia-tuning.tar'),
  ],
};

describe('the package images in the sandbox registry', () => {
  it('are the package images under the names packages ask for, not the agent, busybox or pause', () => {
    expect(registryImages(set).map((i) => i.ref)).toEqual([
      'ghcr.io/skyhook-ts/packages/shellscript:1.1.1',
      'ghcr.io/nvidia/skyhook-packages/shellscript:1.1.0',
      'ghcr.io/nvidia/skyhook-packages/tuning:1.1.4',
    ]);
  });

  it('are left out of what a node pulling through the registry imports, under a golden key of its own', () => {
    const beside = archivesBesideRegistry(set);
    expect(beside.archives).toEqual([
      '/cache/images/0123456789abcdef/skyhook.tar',
      '/cache/images/0123456789abcdef/busybox.tar',
      '/cache/images/0123456789abcdef/pause.tar',
    ]);
    expect(beside.key).not.toBe(set.key);
    expect(beside.key).toContain(set.key);
  });

  it('live beside the archives of their set, so they are cached and pruned with it', () => {
    expect(registryStorageDir(set)).toBe('/cache/images/0123456789abcdef/registry');
  });
});
