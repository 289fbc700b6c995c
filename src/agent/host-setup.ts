/** What happens on the host before a stage's steps run. */
import { copyFileSync, cpSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

/** Upstream copies the container's DNS config onto the host so steps can resolve names. */
export function copyResolvConf(rootMount: string): void {
  if (rootMount === 'local') return;
  mkdirSync(join(rootMount, 'etc'), { recursive: true });
  copyFileSync('/etc/resolv.conf', join(rootMount, 'etc/resolv.conf'));
}

/**
 * Legacy mode: when the operator did not copy the package onto the host, the agent copies its own
 * data dir there (symlinks dereferenced, exec bits kept).
 */
export function ensurePackageOnHost(packageDir: string, dataDir: string): void {
  if (existsSync(packageDir)) return;
  cpSync(dataDir, packageDir, { recursive: true, dereference: true });
  const legacyNodeFiles = '/etc/nvidia-bootstrap/node-files';
  if (existsSync(legacyNodeFiles)) cpSync(legacyNodeFiles, packageDir, { recursive: true, dereference: true });
}

/** A package's `root_dir/` is laid over the host root on every non-uninstall run, check modes included. */
export function copyRootDir(packageDir: string, rootMount: string): void {
  const rootDir = join(packageDir, 'root_dir');
  if (existsSync(rootDir)) cpSync(rootDir, rootMount === 'local' ? '/' : rootMount, { recursive: true, force: true });
}

export function requireExpectedConfigFiles(packageDir: string, names: readonly string[]): void {
  for (const name of names) {
    if (!existsSync(join(packageDir, 'configmaps', name))) {
      throw new Error(`Expected config file ${name} not found in configmaps directory.`);
    }
  }
}
