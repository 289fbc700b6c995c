/**
 * The smoke subset `npm test` runs against the oldest supported Kubernetes release: it must name
 * existing e2e files, select the oldest release for everything the run starts, and the README must
 * state the range the two releases span.
 */
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readVersions } from '../../../src/sandbox/binaries.js';

const ROOT = resolve(fileURLToPath(import.meta.url), '../../../..');
const config = readFileSync(join(ROOT, 'jest.oldest.config.js'), 'utf8');
const smokeFiles = [...config.matchAll(/^\s+'(test\/e2e\/[^']+\.test\.ts)',/gm)].map((m) => m[1] as string);

describe('the smoke subset on the oldest supported release', () => {
  it('names existing e2e files, and few of them', () => {
    expect(smokeFiles.length).toBeGreaterThanOrEqual(4);
    expect(smokeFiles.length).toBeLessThanOrEqual(8);
    for (const file of smokeFiles) expect(existsSync(join(ROOT, file))).toBe(true);
  });

  it('is exactly what jest selects with that config (the run fails on any other count)', () => {
    const listed = spawnSync(
      process.execPath,
      ['node_modules/jest/bin/jest.js', '-c', 'jest.oldest.config.js', '--listTests', '--json'],
      { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '--experimental-vm-modules --no-warnings' } },
    );
    const files = (JSON.parse(listed.stdout.trim().split('\n').pop() ?? '[]') as string[]).map((f) =>
      f.slice(ROOT.length + 1),
    );
    expect(files.sort()).toEqual([...smokeFiles].sort());
  }, 60_000);

  it('selects the oldest release for the workers and everything they spawn', () => {
    expect(config).toMatch(/^process\.env\.SKYHOOK_K8S = 'oldest';$/m);
  });

  it('is stated in the README with the supported range and both releases', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const newest = readVersions('newest');
    const oldest = readVersions('oldest');
    const minor = (v: string) => v.replace(/^v(\d+\.\d+)\..*$/, '$1');
    expect(readme).toContain(`Kubernetes ${minor(oldest.k8s)} to ${minor(newest.k8s)}`);
    for (const v of [newest.k8s, newest.etcd, oldest.k8s, oldest.etcd]) expect(readme).toContain(v);
  });
});
