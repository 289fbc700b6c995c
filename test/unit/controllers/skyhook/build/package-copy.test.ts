/**
 * The package init container's copy script, run for real with a `cp` that refuses to overwrite a
 * symlink (Debian's busybox, when installed; the system cp otherwise), over a package directory
 * whose configmaps/ is laid out like a configMap volume (keys are symlinks into ..data).
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageCopyScript } from '../../../../../src/controllers/skyhook/build/stage-nodeop.js';

const work = mkdtempSync(join(tmpdir(), 'package-copy-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A PATH holding sh, cp, mkdir and rm from busybox when the machine has it. */
function toolPath(): string {
  const busybox = ['/usr/bin/busybox', '/bin/busybox'].find(existsSync);
  if (!busybox) return process.env.PATH ?? '';
  const bin = join(work, 'bin');
  mkdirSync(bin, { recursive: true });
  for (const tool of ['sh', 'cp', 'mkdir', 'rm'])
    if (!existsSync(join(bin, tool))) symlinkSync(busybox, join(bin, tool));
  return bin;
}

/** A package directory like the init container sees: image files plus a configMap-style volume. */
function packageDir(name: string, applySh: string): string {
  const pkg = join(work, name);
  mkdirSync(join(pkg, 'skyhook_dir'), { recursive: true });
  writeFileSync(join(pkg, 'config.json'), '{}');
  writeFileSync(join(pkg, 'skyhook_dir', 'run.sh'), 'echo run');
  const data = join(pkg, 'configmaps', '..2026_11_24_00_00_00.1');
  mkdirSync(data, { recursive: true });
  writeFileSync(join(data, 'apply.sh'), applySh);
  symlinkSync('..2026_11_24_00_00_00.1', join(pkg, 'configmaps', '..data'));
  symlinkSync('..data/apply.sh', join(pkg, 'configmaps', 'apply.sh'));
  return pkg;
}

/** Runs `script` with its fixed paths (/skyhook-package, /root) moved under the test directory. */
function runCopy(script: string, pkg: string, root: string): { status: number | null; stderr: string } {
  const moved = script.replaceAll('/skyhook-package', pkg).replaceAll('"/root', `"${root}`);
  const path = toolPath();
  const result = spawnSync(join(path, 'sh'), ['-c', moved], {
    env: { PATH: path, SKYHOOK_DIR: '/var/lib/skyhook/demo/tuning-1' },
    encoding: 'utf8',
  });
  return { status: result.status, stderr: result.stderr };
}

describe('package copy onto the host', () => {
  it('copies a second stage over the first one, configMap keys as regular files with the new content', () => {
    const root = join(work, 'host');
    const dest = join(root, 'var/lib/skyhook/demo/tuning-1');
    expect(runCopy(packageCopyScript(), packageDir('apply-stage', 'echo one'), root)).toEqual({
      status: 0,
      stderr: '',
    });
    expect(runCopy(packageCopyScript(), packageDir('config-stage', 'echo two'), root)).toEqual({
      status: 0,
      stderr: '',
    });
    expect(lstatSync(join(dest, 'configmaps', 'apply.sh')).isFile()).toBe(true);
    expect(readFileSync(join(dest, 'configmaps', 'apply.sh'), 'utf8')).toBe('echo two');
    expect(readFileSync(join(dest, 'skyhook_dir', 'run.sh'), 'utf8')).toBe('echo run');
    expect(existsSync(join(dest, 'config.json'))).toBe(true);
  });

  it('the plain `cp -r` it replaces fails the second copy with a symlink-refusing cp', () => {
    const path = toolPath();
    const refusesSymlinkOverwrite = path.startsWith(work); // busybox is there
    if (!refusesSymlinkOverwrite) return; // GNU cp overwrites symlinks: nothing to show
    const root = join(work, 'host-plain');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell variables expanded by the copy command, not a template
    const plain = 'mkdir -p "/root${SKYHOOK_DIR}" && cp -r /skyhook-package/* "/root${SKYHOOK_DIR}"';
    expect(runCopy(plain, packageDir('plain-1', 'echo one'), root).status).toBe(0);
    const second = runCopy(plain, packageDir('plain-2', 'echo two'), root);
    expect(second.status).not.toBe(0);
    expect(second.stderr).toMatch(/File exists/);
  });
});
