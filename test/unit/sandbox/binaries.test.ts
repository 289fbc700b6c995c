import { describe, expect, it } from '@jest/globals';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BINARY_NAMES,
  cacheBinDir,
  findBinaries,
  findKubelet,
  k8sRelease,
  readVersions,
} from '../../../src/sandbox/binaries.js';
import { parseDurationMs } from '../../../src/util/duration.js';

describe('control-plane binaries', () => {
  it('are keyed by the versions in tools/versions.env', () => {
    const versions = readVersions('newest');
    expect(versions.k8s).toMatch(/^v1\.37\.\d+$/);
    expect(versions.etcd).toMatch(/^v3\.7\.\d+$/);
    expect(versions.kwok).toBe('v0.8.0');
    expect(cacheBinDir(versions, { SKYHOOK_CACHE_DIR: '/c' })).toBe(
      `/c/bin/k8s-${versions.k8s}-etcd-${versions.etcd}-kwok-${versions.kwok}`,
    );
  });

  it('of the oldest supported release (four minors: 1.34 to 1.37) have their own key and etcd', () => {
    const newest = readVersions('newest');
    const oldest = readVersions('oldest');
    expect(oldest.k8s).toMatch(/^v1\.34\.\d+$/);
    expect(oldest.etcd).toMatch(/^v3\.6\.\d+$/);
    expect(oldest.kwok).toBe(newest.kwok);
    const minor = (v: string) => Number(v.split('.')[1]);
    expect(minor(newest.k8s) - minor(oldest.k8s)).toBe(3);
    expect(cacheBinDir(oldest, { SKYHOOK_CACHE_DIR: '/c' })).not.toBe(cacheBinDir(newest, { SKYHOOK_CACHE_DIR: '/c' }));
  });

  it('are chosen by SKYHOOK_K8S: newest unless it says oldest, and nothing else is accepted', () => {
    expect(k8sRelease({})).toBe('newest');
    expect(k8sRelease({ SKYHOOK_K8S: '' })).toBe('newest');
    expect(k8sRelease({ SKYHOOK_K8S: 'newest' })).toBe('newest');
    expect(k8sRelease({ SKYHOOK_K8S: 'oldest' })).toBe('oldest');
    expect(() => k8sRelease({ SKYHOOK_K8S: '1.34' })).toThrow(/expected newest \(the default\) or oldest/);
  });

  it('of the oldest release are looked for under its key, and missing ones name the command that builds them', () => {
    const cache = mkdtempSync(join(tmpdir(), 'cache-'));
    const env = { SKYHOOK_CACHE_DIR: cache, SKYHOOK_K8S: 'oldest' };
    const dir = cacheBinDir(readVersions('oldest'), env);
    expect(() => findBinaries(env)).toThrow(/npm run cluster:build:oldest/);
    mkdirSync(dir, { recursive: true });
    for (const name of [...BINARY_NAMES, 'kubelet']) {
      writeFileSync(join(dir, name), '#!/bin/sh\n');
      chmodSync(join(dir, name), 0o755);
    }
    expect(findBinaries(env).kubectl).toBe(join(dir, 'kubectl'));
    expect(findKubelet(env)).toBe(join(dir, 'kubelet'));
    expect(() => findBinaries({ SKYHOOK_CACHE_DIR: cache })).toThrow(/`npm run cluster:build` to/);
  });

  it('come from KUBEBUILDER_ASSETS when it holds a complete set', () => {
    const dir = mkdtempSync(join(tmpdir(), 'assets-'));
    for (const name of BINARY_NAMES) {
      writeFileSync(join(dir, name), '#!/bin/sh\n');
      chmodSync(join(dir, name), 0o755);
    }
    expect(findBinaries({ KUBEBUILDER_ASSETS: dir, SKYHOOK_CACHE_DIR: '/nonexistent' }).kwok).toBe(join(dir, 'kwok'));
  });

  it('are reported missing with the way to get them', () => {
    expect(() => findBinaries({ KUBEBUILDER_ASSETS: '/nonexistent', SKYHOOK_CACHE_DIR: '/nonexistent' })).toThrow(
      /npm run cluster:build.*KUBEBUILDER_ASSETS/s,
    );
  });
});

describe('parseDurationMs', () => {
  it.each([
    ['500ms', 500],
    ['2s', 2000],
    ['1m30s', 90_000],
    ['1.5s', 1500],
    ['3', 3000],
    ['1h', 3_600_000],
  ])('%s is %i ms', (text, ms) => {
    expect(parseDurationMs(text)).toBe(ms);
  });
  it('rejects text that is not a duration, saying what it expects', () => {
    expect(() => parseDurationMs('soon')).toThrow(/e\.g\. 500ms/);
    expect(() => parseDurationMs('2x')).toThrow(/not a duration/);
  });
});
