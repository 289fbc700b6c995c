import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { contentKey, hashFiles, PROJECT_IMAGE_INPUTS } from '../../../../src/sandbox/images/content-key.js';

/** The image set's key over a fake checkout, with tool versions as the build gathers them. */
const setKey = (root: string, tools = 'buildah=1.28.2'): string =>
  contentKey({ tools, project: hashFiles(root, PROJECT_IMAGE_INPUTS) });

describe('the image cache key', () => {
  let root: string;
  const write = (path: string, content: string): void => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'image-key-'));
    write('Dockerfile', 'FROM node:24-bookworm-slim\n');
    write('package.json', '{"name":"x"}');
    write('package-lock.json', '{}');
    write('tsconfig.json', '{}');
    write('tsconfig.build.json', '{}');
    write('src/cli/main.ts', 'export {};\n');
    write('bin/skyhook.js', '#!/usr/bin/env node\n');
    write('packages/shellscript/Dockerfile', 'FROM busybox:latest\n');
    write('packages/shellscript/skyhook_dir/shellscript_run.sh', '#!/bin/bash\n');
    write('README.md', '# x\n');
    write('test/unit/a.test.ts', '');
    write('node_modules/a/index.js', '');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('is the same for the same inputs, and a short hex string', () => {
    expect(setKey(root)).toBe(setKey(root));
    expect(setKey(root)).toMatch(/^[0-9a-f]{16}$/);
  });

  it.each([
    ['a source file', () => write('src/cli/main.ts', 'export const x = 1;\n')],
    ['a new source file', () => write('src/cli/other.ts', '')],
    ['a removed source file', () => unlinkSync(join(root, 'src/cli/main.ts'))],
    ['the Dockerfile', () => write('Dockerfile', 'FROM node:22-bookworm-slim\n')],
    ['the lock file', () => write('package-lock.json', '{"lockfileVersion":3}')],
    ['a package file', () => write('packages/shellscript/skyhook_dir/shellscript_run.sh', '#!/bin/bash\nexit 0\n')],
    ['bin/', () => write('bin/kubectl-skyhook.js', '')],
    ['an executable bit', () => chmodSync(join(root, 'packages/shellscript/skyhook_dir/shellscript_run.sh'), 0o755)],
    ['a symlink target', () => symlinkSync('main.ts', join(root, 'src/cli/link.ts'))],
    ['a .dockerignore appearing', () => write('.dockerignore', 'node_modules\n')],
  ])('changes with %s', (_what, change) => {
    const before = setKey(root);
    change();
    expect(setKey(root)).not.toBe(before);
  });

  it.each([
    ['README.md', () => write('README.md', '# changed\n')],
    ['a test', () => write('test/unit/a.test.ts', 'it("x", () => {});')],
    ['node_modules', () => write('node_modules/a/index.js', 'module.exports = 1;')],
    ['a new top-level file', () => write('notes.txt', 'x')],
  ])('stays when %s (not an input) changes', (_what, change) => {
    const before = setKey(root);
    change();
    expect(setKey(root)).toBe(before);
  });

  it('changes with a tool version and does not depend on the order of its parts', () => {
    expect(setKey(root, 'buildah=1.28.3')).not.toBe(setKey(root));
    expect(contentKey({ a: '1', b: '2' })).toBe(contentKey({ b: '2', a: '1' }));
    expect(contentKey({ a: '1', b: '2' })).not.toBe(contentKey({ a: '2', b: '1' }));
  });
});
