/** Host paths resolved inside the host root: /var/run → /run (absolute link), relative links, loops, `..`. */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveInRoot } from '../../../src/maintenance-daemon/host-path.js';

let root = '';
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'host-root-'));
  mkdirSync(join(root, 'run'));
  mkdirSync(join(root, 'var'));
  symlinkSync('/run', join(root, 'var/run')); // Debian's and Ubuntu's /var/run
  writeFileSync(join(root, 'run/reboot-required'), '');
  mkdirSync(join(root, 'opt/real'), { recursive: true });
  symlinkSync('real', join(root, 'opt/rel'));
  symlinkSync('/loop-b', join(root, 'loop-a'));
  symlinkSync('/loop-a', join(root, 'loop-b'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('resolveInRoot', () => {
  it("follows an absolute link against the host root, not this process's /", () => {
    expect(resolveInRoot(root, '/var/run/reboot-required')).toBe(join(root, 'run/reboot-required'));
  });
  it('follows relative links and keeps components that do not exist yet', () => {
    expect(resolveInRoot(root, '/opt/rel/new/file')).toBe(join(root, 'opt/real/new/file'));
    expect(resolveInRoot(root, '/var/maintenance-required')).toBe(join(root, 'var/maintenance-required'));
  });
  it('never leaves the root and gives up on loops', () => {
    expect(resolveInRoot(root, '/../../etc/passwd')).toBe(join(root, 'etc/passwd'));
    expect(() => resolveInRoot(root, '/loop-a/x')).toThrow(/too many symbolic links/);
  });
});
