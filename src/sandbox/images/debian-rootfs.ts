/**
 * A Debian root filesystem made here with mmdebstrap, as the base of the local `node:…-slim`
 * stand-in: with no registry, the images the Dockerfiles start FROM must be made from Debian
 * packages on this machine. Slimmed like Debian's `-slim` images (no docs, man pages or locales).
 */
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runCommand } from './run-command.js';

export interface DebianRootfsOptions {
  suite: string;
  mirror: string;
  /** Packages beyond the minbase variant (Essential + apt). */
  include: readonly string[];
}

export const NODE_BASE_ROOTFS: DebianRootfsOptions = {
  suite: 'bookworm',
  mirror: process.env['SKYHOOK_DEBIAN_MIRROR'] ?? 'http://deb.debian.org/debian',
  // What the node binary links against beyond libc (ldd: libstdc++.so.6, libgcc_s.so.1).
  include: ['libstdc++6', 'libgcc-s1'],
};

const SLIM_DPKG_OPTIONS = [
  'path-exclude=/usr/share/man/*',
  'path-exclude=/usr/share/locale/*',
  'path-include=/usr/share/locale/locale.alias',
  'path-exclude=/usr/share/doc/*',
  'path-include=/usr/share/doc/*/copyright',
  'path-exclude=/usr/share/info/*',
];

/** Writes the root filesystem into `targetDir` (which must not exist yet). */
export async function buildDebianRootfs(targetDir: string, options: DebianRootfsOptions): Promise<void> {
  await runCommand('mmdebstrap', [
    '--variant=minbase',
    '--format=directory',
    '--quiet',
    `--include=${options.include.join(',')}`,
    ...SLIM_DPKG_OPTIONS.map((option) => `--dpkgopt=${option}`),
    options.suite,
    targetDir,
    options.mirror,
  ]);
  // Image layers carry no device nodes (the runtime mounts /dev); mmdebstrap's root mode made some.
  const dev = join(targetDir, 'dev');
  for (const entry of readdirSync(dev)) rmSync(join(dev, entry), { recursive: true, force: true });
}
