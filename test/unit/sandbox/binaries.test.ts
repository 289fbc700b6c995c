import { describe, expect, it } from '@jest/globals';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BINARY_NAMES, cacheBinDir, findBinaries, readVersions } from '../../../src/sandbox/binaries.js';
import { parseDurationMs } from '../../../src/util/duration.js';

describe('control-plane binaries', () => {
  it('are keyed by the versions in tools/versions.env', () => {
    const versions = readVersions();
    expect(versions.k8s).toMatch(/^v1\.33\.\d+$/);
    expect(versions.etcd).toMatch(/^v3\.5\.\d+$/);
    expect(versions.kwok).toBe('v0.8.0');
    expect(cacheBinDir(versions, { SKYHOOK_CACHE_DIR: '/c' })).toBe(
      `/c/bin/k8s-${versions.k8s}-etcd-${versions.etcd}-kwok-${versions.kwok}`,
    );
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
