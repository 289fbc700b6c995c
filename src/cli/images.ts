/** `skyhook images` (`npm run images`): build, or find in the cache, the images real nodes import. */
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { createLogger } from '../kube/logger.js';
import { defaultImageCacheDir, ensureImages } from '../sandbox/images/ensure-images.js';

const HELP = `Usage: skyhook images [--cache-dir DIR] [--json]

Builds, without a registry or a Docker engine, the images that real sandbox nodes import:
the skyhook image (operator + agent) from ./Dockerfile, the shellscript package from
packages/shellscript (also tagged as NVIDIA's shellscript:1.1.0), and local stand-ins for
node:24-bookworm-slim, busybox:1.37/latest and registry.k8s.io/pause:3.10. Needs root and Debian
(buildah, mmdebstrap, gcc; installed when missing). The docker-archive tarballs are cached by a
hash of their inputs; when nothing changed, nothing is built.

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
    if (values.json) {
      console.log(JSON.stringify(set, null, 2));
      return 0;
    }
    console.log(`images (key ${set.key}) in ${set.dir}:`);
    for (const image of set.images)
      console.log(
        `  ${image.ref.padEnd(52)} ${image.archive.padEnd(26)} ${(image.bytes / 1e6).toFixed(1).padStart(7)} MB`,
      );
    console.log(`import on a node: for f in ${set.dir}/*.tar; do ctr -n k8s.io images import "$f"; done`);
    return 0;
  } catch (error) {
    logger.error({ err: error }, 'image build failed');
    return 1;
  }
}
