/**
 * Root filesystems of real nodes. The Debian base (mmdebstrap, `tools/build-node-rootfs.sh`) is a
 * tarball cached by its package list; a "golden" copy of it, configured and with the image
 * archives already imported into containerd, is cached by base and images, because importing takes
 * ~9 s per boot. Each node then starts from its own copy of the golden tree on a disk-backed
 * filesystem (containerd's overlayfs snapshotter cannot use an overlay or tmpfs-hungry root).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { cacheRoot } from '../binaries.js';
import { isAlive, startComponent } from '../processes.js';
import { cniConfig, containerdConfig, NODE_PATHS } from './node-files.js';
import { nodeUnitEntries } from './node-units.js';

const run = promisify(execFile);
const repoRoot = resolve(fileURLToPath(import.meta.url), '../../../..');
export const NODE_INIT_SCRIPT = join(repoRoot, 'src/sandbox/real-node/node-init.sh');

/** Image archives (docker-archive tarballs) every real node has in containerd from its first boot. */
export interface NodeImages {
  archives: string[];
  /** A content key of the archives; defaults to one made from their paths, sizes and times. */
  key?: string;
}

async function runTool(what: string, file: string, args: string[], env?: NodeJS.ProcessEnv): Promise<string> {
  try {
    const { stdout } = await run(file, args, { maxBuffer: 16 * 1024 * 1024, ...(env ? { env } : {}) });
    return stdout;
  } catch (error) {
    const err = error as NodeJS.ErrnoException & { stderr?: string };
    throw new Error(`${what} failed: ${(err.stderr ?? '').trim().split('\n').slice(-5).join('\n') || err.message}`);
  }
}

/**
 * Runs a long step (extract, import, copy) as a recorded process group (processes.ts), so the exit
 * hook of a stopped sandbox kills it instead of leaving it writing into a directory being removed.
 */
async function runRecorded(
  what: string,
  runDir: string,
  name: string,
  file: string,
  args: string[],
  env?: NodeJS.ProcessEnv,
): Promise<void> {
  mkdirSync(join(runDir, 'logs'), { recursive: true });
  const step = startComponent(runDir, name, file, args, env);
  const exit = await step.exited;
  if (exit !== '0') {
    const log = existsSync(step.logFile)
      ? readFileSync(step.logFile, 'utf8').trimEnd().split('\n').slice(-5).join('\n')
      : '';
    throw new Error(`${what} failed (exit ${exit}): ${log}`);
  }
}

/**
 * What the machine itself needs for real nodes (containerd, runc and the CNI plugins live in the
 * node root filesystem, not here): installed when missing and root, else an error with the command.
 */
export async function ensureHostPackages(): Promise<void> {
  await runTool('checking the Debian packages real nodes need (tools/ensure-system-packages.sh)', 'bash', [
    join(repoRoot, 'tools/ensure-system-packages.sh'),
    'real nodes',
    'mmdebstrap',
    'iproute2',
    'util-linux',
    'iptables',
    'openssl',
  ]);
}

/** The Debian base tarball, built on first use (~60 s, network-bound). */
export async function ensureBaseRootfs(): Promise<string> {
  const out = await runTool('building the real-node root filesystem (tools/build-node-rootfs.sh)', 'bash', [
    join(repoRoot, 'tools/build-node-rootfs.sh'),
  ]);
  return out.trim().split('\n').pop() ?? '';
}

function imagesKey(images: NodeImages): string {
  if (images.key) return images.key;
  const hash = createHash('sha256');
  for (const archive of [...images.archives].sort()) {
    const stat = statSync(archive);
    hash.update(`${resolve(archive)} ${stat.size} ${stat.mtimeMs}\n`);
  }
  return hash.digest('hex').slice(0, 16);
}

function linkOrCopy(from: string, to: string): void {
  try {
    linkSync(from, to);
  } catch {
    copyFileSync(from, to);
  }
}

/** Writes the node configuration that does not depend on the node (containerd, CNI, systemd units). */
function configureRootfs(rootfs: string): void {
  const put = (path: string, text: string, mode = 0o644): void => {
    mkdirSync(join(rootfs, path, '..'), { recursive: true });
    writeFileSync(join(rootfs, path), text);
    chmodSync(join(rootfs, path), mode);
  };
  put(NODE_PATHS.containerdConfig, containerdConfig());
  put(NODE_PATHS.cniConfig, cniConfig());
  for (const entry of nodeUnitEntries()) {
    if (entry.kind === 'file') put(entry.path, entry.content);
    else {
      mkdirSync(join(rootfs, entry.path, '..'), { recursive: true });
      rmSync(join(rootfs, entry.path), { force: true });
      symlinkSync(entry.target, join(rootfs, entry.path));
    }
  }
  mkdirSync(join(rootfs, 'etc/kubernetes/pki'), { recursive: true });
}

/**
 * The golden root filesystem for these images: `<cache>/rootfs/golden-<key>/rootfs`. Built in a
 * private directory and renamed into place, so parallel sandboxes never see half of one.
 */
export async function ensureGoldenRootfs(
  images: NodeImages,
  progress: (message: string) => void = () => undefined,
): Promise<string> {
  const base = await ensureBaseRootfs();
  const key = createHash('sha256')
    .update(`${basename(base)} ${imagesKey(images)} ${containerdConfig()} ${cniConfig()}`)
    .update(JSON.stringify(nodeUnitEntries()))
    .digest('hex')
    .slice(0, 16);
  const golden = join(cacheRoot(), 'rootfs', `golden-${key}`);
  if (existsSync(join(golden, 'rootfs'))) return join(golden, 'rootfs');

  const started = Date.now();
  removeAbandonedPartials(join(golden, '..'));
  const partial = `${golden}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  try {
    mkdirSync(join(partial, 'rootfs'), { recursive: true });
    mkdirSync(join(partial, 'host'), { recursive: true });
    mkdirSync(join(partial, 'images'), { recursive: true });
    await runRecorded(`extracting ${base}`, partial, 'extract', 'tar', [
      '--numeric-owner',
      '-xpf',
      base,
      '-C',
      join(partial, 'rootfs'),
    ]);
    configureRootfs(join(partial, 'rootfs'));
    for (const [i, archive] of images.archives.entries())
      linkOrCopy(archive, join(partial, 'images', `${i}-${basename(archive)}`));
    progress(`importing ${images.archives.length} image archive(s) into the golden real-node root filesystem`);
    await runRecorded(
      `importing images into the real-node root filesystem (see ${join(partial, 'host/logs')})`,
      partial,
      'import',
      'unshare',
      [
        '--mount',
        '--pid',
        '--uts',
        '--ipc',
        '--net',
        '--fork',
        '--kill-child',
        '--propagation',
        'private',
        'sh',
        NODE_INIT_SCRIPT,
      ],
      { ...process.env, NODE_DIR: partial, NODE_MODE: 'import', IMAGES_DIR: join(partial, 'images') },
    );
    rmSync(join(partial, 'images'), { recursive: true, force: true });
    try {
      renameSync(partial, golden);
    } catch {
      // Another sandbox finished the same golden tree first: use theirs.
      rmSync(partial, { recursive: true, force: true });
    }
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    throw error;
  }
  pruneGoldenRootfs(golden);
  progress(`golden real-node root filesystem ready in ${((Date.now() - started) / 1000).toFixed(1)} s: ${golden}`);
  return join(golden, 'rootfs');
}

/** Golden trees half-built by processes that are gone (killed mid-build). */
function removeAbandonedPartials(dir: string): void {
  for (const name of existsSync(dir) ? readdirSync(dir) : []) {
    const owner = /^golden-[0-9a-f]+\.partial-(\d+)$/.exec(name);
    if (owner && !isAlive(Number(owner[1]))) rmSync(join(dir, name), { recursive: true, force: true });
  }
}

/** Golden trees kept besides the newest (~1.4 GB each; each image set or base change makes one). */
const GOLDEN_KEPT = 2;

/** Removes all but the newest golden trees, never `current`, so the cache does not grow with every source change. */
function pruneGoldenRootfs(current: string): void {
  const dir = join(current, '..');
  const old = readdirSync(dir)
    .filter((name) => /^golden-[0-9a-f]+$/.test(name) && join(dir, name) !== current)
    .map((name) => ({ path: join(dir, name), mtime: statSync(join(dir, name)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime)
    .slice(GOLDEN_KEPT - 1);
  for (const { path } of old) rmSync(path, { recursive: true, force: true });
}

/**
 * containerd's image content and unpacked layers: written once by the import, never changed in
 * place afterwards (new containers get new snapshot directories), so nodes share them by hard link.
 */
const SHARED_IMAGE_DIRS = [
  'var/lib/containerd/io.containerd.content.v1.content',
  'var/lib/containerd/io.containerd.snapshotter.v1.overlayfs/snapshots',
];

/**
 * A node's own copy of the golden tree: a real copy of everything a node may change in place (a
 * package may append to any file of its host), hard links for the images (~1 GB, 7 s to copy).
 */
export async function copyRootfs(golden: string, target: string, runDir: string, name: string): Promise<void> {
  mkdirSync(target, { recursive: true });
  const excludes = SHARED_IMAGE_DIRS.map((dir) => `--exclude=./${dir}`).join(' ');
  const links = SHARED_IMAGE_DIRS.map((dir) => `cp -al "$golden/${dir}" "$target/${dir}"`).join(' && ');
  const script = `set -e; tar -C "$golden" ${excludes} -cf - . | tar -C "$target" --numeric-owner -xpf -; ${links}`;
  await runRecorded(
    `copying the real-node root filesystem to ${target}`,
    runDir,
    `${name}-copy`,
    'sh',
    ['-c', script],
    { ...process.env, golden, target },
  );
}
