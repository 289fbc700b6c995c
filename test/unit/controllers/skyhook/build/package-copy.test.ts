/**
 * The package init container's copy script, run for real with the strictest `cp` there is: one that
 * refuses to create anything where an entry already exists ("File exists", as some busybox builds do
 * for symlinks) and otherwise is the system's cp. Packages are laid out as the init container sees
 * them: image files, plus configmaps/ laid out like a configMap volume (keys are symlinks into ..data).
 * The last test copies NVIDIA's nvidia-tuned package (test data beside the repository) twice.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageCopyScript } from '../../../../../src/controllers/skyhook/build/stage-nodeop.js';

const work = mkdtempSync(join(tmpdir(), 'package-copy-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const COPY_DIR = '/var/lib/skyhook/demo/tuning-1';
const REPO = new URL('../../../../..', import.meta.url).pathname.replace(/\/$/, '');
/** NVIDIA's nvidia-tuned image content (over tuned 1.2.0), test data beside the repository. */
const NVIDIA_TUNED = join(REPO, '../shared/upstream-packages/at-release-tags/merged/nvidia-tuned-0.2.3');

/**
 * A PATH whose `cp` never overwrites: before copying, it fails like a symlink-refusing busybox when
 * any file or symlink it would create (recursively) already exists. Directories may exist (merged).
 */
function strictCpPath(): string {
  const bin = join(work, 'bin');
  if (existsSync(join(bin, 'cp'))) return `${bin}:/usr/bin:/bin`;
  mkdirSync(bin, { recursive: true });
  writeFileSync(
    join(bin, 'cp'),
    [
      '#!/bin/sh',
      'n=0; for a; do n=$((n + 1)); last=$a; done',
      "refuse() { echo \"cp: can't create '$1': File exists\" >&2; exit 1; }",
      'i=0',
      'for a; do',
      '  i=$((i + 1)); [ "$i" -lt "$n" ] || break',
      '  case "$a" in -*) continue ;; esac',
      '  if [ -d "$last" ] && [ ! -L "$last" ]; then t="$last/$(basename "$a")"; else t="$last"; fi',
      '  if [ -d "$a" ] && [ ! -L "$a" ]; then',
      '    (cd "$a" && find . ! -type d) | while IFS= read -r rel; do',
      '      if [ -e "$t/$rel" ] || [ -L "$t/$rel" ]; then refuse "$t/$rel"; fi',
      '    done || exit 1',
      '  elif [ -e "$t" ] || [ -L "$t" ]; then refuse "$t"; fi',
      'done',
      'exec /bin/cp "$@"',
    ].join('\n'),
  );
  chmodSync(join(bin, 'cp'), 0o755);
  return `${bin}:/usr/bin:/bin`;
}

/** Writes `keys` as a configMap volume at `<pkg>/configmaps`. */
function configMapVolume(pkg: string, keys: Record<string, string>): void {
  const data = join(pkg, 'configmaps', '..2026_11_24_00_00_00.1');
  mkdirSync(data, { recursive: true });
  symlinkSync('..2026_11_24_00_00_00.1', join(pkg, 'configmaps', '..data'));
  for (const [key, value] of Object.entries(keys)) {
    writeFileSync(join(data, key), value);
    symlinkSync(`..data/${key}`, join(pkg, 'configmaps', key));
  }
}

/** A package directory like the init container sees: image files (a relative symlink among them) plus a configMap. */
function packageDir(name: string, keys: Record<string, string>): string {
  const pkg = join(work, name);
  mkdirSync(join(pkg, 'skyhook_dir'), { recursive: true });
  mkdirSync(join(pkg, 'profiles/common/p1'), { recursive: true });
  mkdirSync(join(pkg, 'profiles/os/debian/12'), { recursive: true });
  writeFileSync(join(pkg, 'config.json'), '{}');
  writeFileSync(join(pkg, 'skyhook_dir', 'run.sh'), 'echo run');
  writeFileSync(join(pkg, 'profiles/common/p1/tuned.conf'), '[main]');
  symlinkSync('../../../common/p1', join(pkg, 'profiles/os/debian/12/p1'));
  // Read-only, as files copied out of an image often are.
  chmodSync(join(pkg, 'skyhook_dir', 'run.sh'), 0o555);
  configMapVolume(pkg, keys);
  return pkg;
}

/** Runs `script` with its fixed paths (/skyhook-package, /root) moved under the test directory. */
function runCopy(script: string, pkg: string, root: string): { status: number | null; stderr: string } {
  const moved = script.replaceAll('/skyhook-package', pkg).replaceAll('"/root', `"${root}`);
  const result = spawnSync('/bin/sh', ['-c', moved], {
    env: { PATH: strictCpPath(), SKYHOOK_DIR: COPY_DIR },
    encoding: 'utf8',
  });
  return { status: result.status, stderr: result.stderr };
}

const ok = { status: 0, stderr: '' };

describe('package copy onto the host', () => {
  it('copies a later stage over an earlier one: symlinks, read-only files, configMap keys as regular files', () => {
    const root = join(work, 'host');
    const dest = join(root, COPY_DIR);
    expect(runCopy(packageCopyScript(), packageDir('apply-stage', { 'apply.sh': 'echo one' }), root)).toEqual(ok);
    expect(runCopy(packageCopyScript(), packageDir('config-stage', { 'apply.sh': 'echo two' }), root)).toEqual(ok);
    expect(lstatSync(join(dest, 'configmaps', 'apply.sh')).isFile()).toBe(true);
    expect(readFileSync(join(dest, 'configmaps', 'apply.sh'), 'utf8')).toBe('echo two');
    expect(readFileSync(join(dest, 'skyhook_dir', 'run.sh'), 'utf8')).toBe('echo run');
    expect(readlinkSync(join(dest, 'profiles/os/debian/12/p1'))).toBe('../../../common/p1');
    expect(readFileSync(join(dest, 'profiles/os/debian/12/p1/tuned.conf'), 'utf8')).toBe('[main]');
    expect(existsSync(join(dest, 'config.json'))).toBe(true);
  });

  it('keeps files a step wrote into configmaps/ and the package dir; SCR keys overwrite, removed keys go', () => {
    const root = join(work, 'host-steps');
    const dest = join(root, COPY_DIR);
    const first = packageDir('steps-1', { accelerator: 'h100', intent: 'inference', stale: 'x' });
    expect(runCopy(packageCopyScript(), first, root)).toEqual(ok);
    // What nvidia-tuned's config step does, and a file of a step beside the package's own.
    writeFileSync(join(dest, 'configmaps', 'tuned_profile'), 'nvidia-h100-inference');
    writeFileSync(join(dest, 'profiles', 'written-by-step'), 'kept');
    // A step that overwrote an SCR key: the SCR's value wins on the next copy.
    writeFileSync(join(dest, 'configmaps', 'intent'), 'changed by a step');

    const second = packageDir('steps-2', { accelerator: 'gb200', intent: 'inference' });
    expect(runCopy(packageCopyScript(), second, root)).toEqual(ok);
    expect(readFileSync(join(dest, 'configmaps', 'tuned_profile'), 'utf8')).toBe('nvidia-h100-inference');
    expect(readFileSync(join(dest, 'profiles', 'written-by-step'), 'utf8')).toBe('kept');
    expect(readFileSync(join(dest, 'configmaps', 'accelerator'), 'utf8')).toBe('gb200');
    expect(readFileSync(join(dest, 'configmaps', 'intent'), 'utf8')).toBe('inference');
    expect(existsSync(join(dest, 'configmaps', 'stale'))).toBe(false);
    expect(readdirSync(join(dest, 'configmaps')).sort()).toEqual(['accelerator', 'intent', 'tuned_profile']);
  });

  it('the plain `cp -r` it replaces fails the second copy with a cp that refuses to overwrite', () => {
    const root = join(work, 'host-plain');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell variables expanded by the copy command, not a template
    const plain = 'mkdir -p "/root${SKYHOOK_DIR}" && cp -r /skyhook-package/* "/root${SKYHOOK_DIR}"';
    expect(runCopy(plain, packageDir('plain-1', { 'apply.sh': 'echo one' }), root).status).toBe(0);
    const second = runCopy(plain, packageDir('plain-2', { 'apply.sh': 'echo two' }), root);
    expect(second.status).not.toBe(0);
    expect(second.stderr).toMatch(/File exists/);
  });

  it("copies NVIDIA's nvidia-tuned 0.2.3 package twice, keeping tuned_profile", () => {
    if (!existsSync(NVIDIA_TUNED)) {
      // The test data lives beside the repository (../shared); a checkout without it proves the rest above.
      console.warn(`no ${NVIDIA_TUNED}: nvidia-tuned's own files not copied`);
      return;
    }
    const root = join(work, 'host-nvidia');
    const dest = join(root, COPY_DIR);
    const stage = (name: string): string => {
      const pkg = join(work, name);
      cpSync(NVIDIA_TUNED, pkg, { recursive: true, verbatimSymlinks: true });
      configMapVolume(pkg, { accelerator: 'h100', intent: 'inference' });
      return pkg;
    };
    expect(runCopy(packageCopyScript(), stage('nvidia-config'), root)).toEqual(ok);
    writeFileSync(join(dest, 'configmaps', 'tuned_profile'), 'nvidia-h100-inference');
    expect(runCopy(packageCopyScript(), stage('nvidia-post-interrupt'), root)).toEqual(ok);
    expect(readFileSync(join(dest, 'configmaps', 'tuned_profile'), 'utf8')).toBe('nvidia-h100-inference');
    const profile = join(dest, 'profiles/os/debian/12/nvidia-h100-inference');
    const source = join(NVIDIA_TUNED, 'profiles/os/debian/12/nvidia-h100-inference');
    expect(lstatSync(profile).isSymbolicLink()).toBe(lstatSync(source).isSymbolicLink());
    expect(readFileSync(join(dest, 'skyhook_dir/prepare_nvidia_profiles.sh'))).toEqual(
      readFileSync(join(NVIDIA_TUNED, 'skyhook_dir/prepare_nvidia_profiles.sh')),
    );
  });
});
