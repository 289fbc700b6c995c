/**
 * busybox 1.37.0 compiled here from its release tarball, for the `busybox:1.37` stand-in. Debian's
 * busybox-static is not a faithful stand-in: Debian builds it without FEATURE_NON_POSIX_CP, so its
 * `cp -r` refuses to replace an existing symlink (the second stage's package copy fails with
 * "can't create …: File exists"), and it is 1.35. docker.io/library/busybox builds upstream's
 * defconfig, where that option is on; so do we. The tarball is upstream's, as Debian mirrors it
 * (busybox_1.37.0.orig.tar.bz2), pinned by its sha256.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { runCommand } from './run-command.js';

export const BUSYBOX_SOURCE = {
  version: '1.37.0',
  file: 'busybox_1.37.0.orig.tar.bz2',
  poolPath: 'pool/main/b/busybox',
  sha256: '3311dff32e746499f4df0d5df04d7eb396382d7e108bb9250e7b519b837043a4',
} as const;

/** Changes to upstream's defconfig: one static binary (the image has no libc) and the docker-library tweaks. */
const CONFIG_OVERRIDES: Readonly<Record<string, string>> = {
  CONFIG_STATIC: 'y',
  CONFIG_AR: 'y',
  CONFIG_FEATURE_AR_CREATE: 'y',
  CONFIG_FEATURE_AR_LONG_FILENAMES: 'y',
};

async function downloadVerified(url: string, target: string, sha256: string): Promise<void> {
  if (existsSync(target) && createHash('sha256').update(readFileSync(target)).digest('hex') === sha256) return;
  const response = await fetch(url);
  if (!response.ok)
    throw new Error(
      `could not download ${url}: HTTP ${response.status}; set SKYHOOK_DEBIAN_MIRROR to a reachable Debian mirror`,
    );
  const body = Buffer.from(await response.arrayBuffer());
  const actual = createHash('sha256').update(body).digest('hex');
  if (actual !== sha256)
    throw new Error(
      `${url} has sha256 ${actual}, expected ${sha256}: the mirror serves another file; refusing to build it`,
    );
  writeFileSync(`${target}.partial`, body);
  renameSync(`${target}.partial`, target);
}

function applyConfigOverrides(configFile: string): void {
  let config = readFileSync(configFile, 'utf8');
  for (const [name, value] of Object.entries(CONFIG_OVERRIDES)) {
    const line = new RegExp(`^(# ${name} is not set|${name}=.*)$`, 'm');
    config = line.test(config) ? config.replace(line, `${name}=${value}`) : `${config}${name}=${value}\n`;
  }
  writeFileSync(configFile, config);
}

/**
 * Downloads (once, into `downloadsDir`) and compiles busybox in `workDir`; returns the binary.
 * `mirror` is a Debian mirror's base URL (http://deb.debian.org/debian).
 */
export async function buildBusyboxFromSource(workDir: string, downloadsDir: string, mirror: string): Promise<string> {
  mkdirSync(downloadsDir, { recursive: true });
  mkdirSync(workDir, { recursive: true });
  const tarball = join(downloadsDir, BUSYBOX_SOURCE.file);
  await downloadVerified(
    `${mirror.replace(/\/+$/, '')}/${BUSYBOX_SOURCE.poolPath}/${BUSYBOX_SOURCE.file}`,
    tarball,
    BUSYBOX_SOURCE.sha256,
  );
  await runCommand('tar', ['-xjf', tarball, '-C', workDir, '--no-same-owner']);
  const sourceDir = join(workDir, `busybox-${BUSYBOX_SOURCE.version}`);
  await runCommand('make', ['defconfig'], { cwd: sourceDir });
  applyConfigOverrides(join(sourceDir, '.config'));
  // oldconfig asks about what the overrides newly enable; the defaults are what defconfig would pick.
  await runCommand('make', ['oldconfig'], { cwd: sourceDir, input: '\n'.repeat(200) });
  await runCommand('make', [`-j${availableParallelism()}`, 'busybox'], { cwd: sourceDir });
  return join(sourceDir, 'busybox');
}
