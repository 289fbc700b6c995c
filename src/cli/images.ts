/**
 * `skyhook images` (`npm run images`): build, or find in the cache, the images real nodes import,
 * and push the package images into the sandbox registry's storage that real nodes pull them from.
 */
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { createLogger } from '../kube/logger.js';
import { defaultImageCacheDir, ensureImages } from '../sandbox/images/ensure-images.js';
import { ensureRegistryImages } from '../sandbox/registry/registry-images.js';

const HELP = `Usage: skyhook images [--cache-dir DIR] [--json]

Builds, without a Docker engine, the images of real sandbox nodes:
the skyhook image (operator + agent) from ./Dockerfile, the shellscript package from
packages/shellscript (also tagged as NVIDIA's shellscript:1.1.0), and local stand-ins for
node:24-bookworm-slim, busybox:1.37/latest and registry.k8s.io/pause:3.10. Needs root and Debian
(buildah, mmdebstrap, gcc; installed when missing). The docker-archive tarballs are cached by a
hash of their inputs; when nothing changed, nothing is built.

The package images (the shellscript package and NVIDIA's, ghcr.io/.../skyhook-packages/...) are
then pushed into a sandbox registry storage beside the archives (a registry started for the push
and stopped after; tools/build-registry.sh builds it once). Real nodes of \`npm start --real-nodes N\`
pull them through that registry; the other images they import. Cached with the archives: when
nothing changed, nothing is pushed.

Options:
  --cache-dir DIR   cache directory (default ${defaultImageCacheDir()})
  --json            print the image set as JSON on stdout (logs go to stderr)
`;

export async function runImagesCli(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      'cache-dir': { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const logger = createLogger({
    name: 'images',
    ...(values.json ? { destination: pino.destination({ dest: 2, sync: true }) } : {}),
  });
  try {
    const set = await ensureImages({ ...(values['cache-dir'] ? { cacheDir: values['cache-dir'] } : {}), logger });
    const registry = await ensureRegistryImages(set, { logger });
    if (values.json) {
      console.log(JSON.stringify({ ...set, registry }, null, 2));
      return 0;
    }
    console.log(`images (key ${set.key}) in ${set.dir}:`);
    for (const image of set.images)
      console.log(
        `  ${image.ref.padEnd(52)} ${image.archive.padEnd(26)} ${(image.bytes / 1e6).toFixed(1).padStart(7)} MB`,
      );
    console.log(`import on a node: for f in ${set.dir}/*.tar; do ctr -n k8s.io images import "$f"; done`);
    console.log(
      `sandbox registry storage ${registry.storageDir}: ${registry.pushed ? 'pushed' : 'up to date'} (${registry.refs.join(', ')})`,
    );
    return 0;
  } catch (error) {
    logger.error({ err: error }, 'image build failed');
    return 1;
  }
}
