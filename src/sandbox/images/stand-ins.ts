/**
 * Local stand-ins for the public images the project's Dockerfiles and pods name (busybox, pause,
 * node:…-slim), made from files on this machine so no registry is needed: each is a staging
 * directory laid out like the real image, added to an empty buildah container and committed under
 * the real image's name with the real image's entrypoint, command, user and environment.
 */
import { chmodSync, copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Buildah } from './buildah.js';
import { buildDebianRootfs, type DebianRootfsOptions } from './debian-rootfs.js';
import { runCommand } from './run-command.js';

/** Adds `stagingDir`'s contents as the only layer of a new image `ref`, configured by `configFlags`. */
async function commitStagingDir(
  buildah: Buildah,
  stagingDir: string,
  ref: string,
  configFlags: readonly string[],
): Promise<void> {
  const container = await buildah.from('scratch');
  await buildah.copy(container, stagingDir, '/');
  await buildah.config(container, ['--os', 'linux', '--arch', 'amd64', ...configFlags]);
  await buildah.commit(container, ref);
}

const BUSYBOX_PASSWD =
  'root:x:0:0:root:/root:/bin/sh\ndaemon:x:1:1:daemon:/usr/sbin:/bin/false\nnobody:x:65534:65534:nobody:/home:/bin/false\n';
const BUSYBOX_GROUP = 'root:x:0:\ndaemon:x:1:\nnobody:x:65534:\n';

/**
 * busybox as docker.io/library/busybox lays it out: one static binary in /bin, every applet a link
 * to it in /bin, a minimal /etc, `sh` as the command.
 */
export async function buildBusyboxImage(
  buildah: Buildah,
  stagingDir: string,
  busyboxBinary: string,
  refs: readonly string[],
): Promise<void> {
  const bin = join(stagingDir, 'bin');
  mkdirSync(bin, { recursive: true });
  copyFileSync(busyboxBinary, join(bin, 'busybox'));
  chmodSync(join(bin, 'busybox'), 0o755);
  const applets = (await runCommand(busyboxBinary, ['--list']))
    .split('\n')
    .filter((name) => name && name !== 'busybox');
  for (const applet of applets) symlinkSync('busybox', join(bin, applet));
  for (const dir of ['etc', 'root', 'home', 'var/spool/mail', 'usr/sbin'])
    mkdirSync(join(stagingDir, dir), { recursive: true });
  mkdirSync(join(stagingDir, 'tmp'), { mode: 0o1777 });
  chmodSync(join(stagingDir, 'tmp'), 0o1777);
  writeFileSync(join(stagingDir, 'etc/passwd'), BUSYBOX_PASSWD);
  writeFileSync(join(stagingDir, 'etc/group'), BUSYBOX_GROUP);
  const [first, ...more] = refs;
  if (!first) throw new Error('buildBusyboxImage needs at least one image reference');
  await commitStagingDir(buildah, stagingDir, first, [
    '--cmd',
    'sh',
    '--env',
    'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  ]);
  if (more.length > 0) await buildah.tag(first, ...more);
}

/**
 * registry.k8s.io/pause from the same pause.c Kubernetes builds it from (it ships in the
 * k8s.io/kubernetes module), statically linked, entrypoint /pause, user 65535 as upstream.
 */
export async function buildPauseImage(
  buildah: Buildah,
  stagingDir: string,
  pauseSource: string,
  version: string,
  ref: string,
): Promise<void> {
  mkdirSync(stagingDir, { recursive: true });
  const binary = join(stagingDir, 'pause');
  await runCommand('gcc', [
    '-Os',
    '-Wall',
    '-Werror',
    '-static',
    `-DVERSION=v${version}-skyhook-ts`,
    '-o',
    binary,
    pauseSource,
  ]);
  await runCommand('strip', [binary]);
  await commitStagingDir(buildah, stagingDir, ref, ['--entrypoint', '["/pause"]', '--user', '65535:65535']);
}

export interface NodeBaseInputs {
  rootfs: DebianRootfsOptions;
  /** The Node binary of the project's `node` dev dependency (same major as the real image). */
  nodeBinary: string;
  nodeVersion: string;
  /** npm as the real image bundles it, from the npm registry (`npm pack npm@<version>`). */
  npmVersion: string;
}

/** node:<major>-bookworm-slim: Debian minbase + /usr/local/bin/node + npm, command `node`. */
export async function buildNodeBaseImage(
  buildah: Buildah,
  stagingDir: string,
  inputs: NodeBaseInputs,
  ref: string,
): Promise<void> {
  const rootfs = join(stagingDir, 'rootfs');
  mkdirSync(stagingDir, { recursive: true });
  await buildDebianRootfs(rootfs, inputs.rootfs);
  const localBin = join(rootfs, 'usr/local/bin');
  const npmDir = join(rootfs, 'usr/local/lib/node_modules/npm');
  mkdirSync(localBin, { recursive: true });
  mkdirSync(npmDir, { recursive: true });
  copyFileSync(inputs.nodeBinary, join(localBin, 'node'));
  chmodSync(join(localBin, 'node'), 0o755);
  const tarball = (
    await runCommand('npm', ['pack', '--silent', `npm@${inputs.npmVersion}`, '--pack-destination', stagingDir], {
      cwd: stagingDir,
    })
  )
    .trim()
    .split('\n')
    .pop()!;
  await runCommand('tar', ['-xzf', join(stagingDir, tarball), '-C', npmDir, '--strip-components=1', '--no-same-owner']);
  symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(localBin, 'npm'));
  symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(localBin, 'npx'));
  await commitStagingDir(buildah, rootfs, ref, [
    '--cmd',
    'node',
    '--env',
    'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    '--env',
    `NODE_VERSION=${inputs.nodeVersion}`,
  ]);
}
