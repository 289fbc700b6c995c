/**
 * NVIDIA's package directories as build contexts: what the images are named, and the git symlinks
 * of nvidia-tuned's profiles restored when the checkout wrote them as files holding their target.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  findUpstreamPackages,
  NVIDIA_PACKAGES,
  nvidiaRef,
  stageBuildContext,
  standInNotice,
  upstreamPackagesKey,
} from '../../../../src/sandbox/images/nvidia-packages.js';

const work = mkdtempSync(join(tmpdir(), 'nvidia-packages-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("NVIDIA's package images", () => {
  it('carry the published names and tags, tuned before nvidia-tuned (its FROM)', () => {
    expect(NVIDIA_PACKAGES.map(nvidiaRef)).toEqual([
      'ghcr.io/nvidia/skyhook-packages/shellscript:1.1.1',
      'ghcr.io/nvidia/skyhook-packages/tuning:1.1.4',
      'ghcr.io/nvidia/skyhook-packages/tuned:1.2.0',
      'ghcr.io/nvidia/skyhook-packages/nvidia-tuned:0.2.3',
      'ghcr.io/nvidia/skyhook-packages/kdump:1.1.0',
    ]);
  });

  it('restore git symlinks written as files, and leave real files alone', () => {
    const source = join(work, 'pkg');
    mkdirSync(join(source, 'profiles/os/common/p'), { recursive: true });
    mkdirSync(join(source, 'profiles/os/debian/12'), { recursive: true });
    writeFileSync(join(source, 'profiles/os/common/p/tuned.conf'), '[main]\ninclude=x\n');
    writeFileSync(join(source, 'profiles/os/debian/12/p'), '../../common/p');
    writeFileSync(join(source, 'Dockerfile'), 'FROM busybox:latest\n');
    const target = join(work, 'context');
    expect(stageBuildContext(source, target)).toEqual(['profiles/os/debian/12/p']);
    expect(readlinkSync(join(target, 'profiles/os/debian/12/p'))).toBe('../../common/p');
    expect(readFileSync(join(target, 'profiles/os/debian/12/p/tuned.conf'), 'utf8')).toBe('[main]\ninclude=x\n');
    expect(lstatSync(join(target, 'profiles/os/common/p/tuned.conf')).isFile()).toBe(true);
  });

  it('without the package directories: key `absent`, and the stand-in says so', () => {
    expect(findUpstreamPackages(work, { SKYHOOK_UPSTREAM_PACKAGES: join(work, 'none') })).toBeUndefined();
    expect(upstreamPackagesKey(undefined)).toBe('absent');
    const notice = standInNotice([
      { name: 'shellscript', ref: 'ghcr.io/nvidia/skyhook-packages/shellscript:1.1.1', archive: 'a', standIn: true },
    ]);
    expect(notice).toMatch(/shellscript:1\.1\.1 is an offline stand-in/);
    expect(standInNotice([{ name: 'tuned', ref: 'r', archive: 'a', standIn: false }])).toBeUndefined();
  });
});
