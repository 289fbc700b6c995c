/**
 * A package laid out like NVIDIA's tuning package passes validate, and its apply (no steps: a
 * no-op) and config stages run chrooted in a temp root, via the agent CLI; validate's exit codes too.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  agentEnv,
  buildAgentCli,
  FIXTURES,
  makeRootfs,
  placePackage,
  runAgentProcess,
  SHELLSCRIPT_PACKAGE,
} from '../../agent/harness.js';

const TUNING = join(FIXTURES, 'tuning-like');
const COPY_DIR = '/var/lib/skyhook/demo/sysctl-1.1.4-0f0e-1';
let cli: ReturnType<typeof buildAgentCli>;
let root: string;

beforeAll(() => {
  cli = buildAgentCli();
  root = makeRootfs();
});
afterAll(() => {
  cli.cleanup();
  rmSync(root, { recursive: true, force: true });
});

const run = (args: string[]) =>
  runAgentProcess(cli.launcher, args, agentEnv({ SKYHOOK_RESOURCE_ID: 'demo-0f0e-1_sysctl_1.1.4' }));

describe('skyhook agent validate (CLI)', () => {
  it('exits 0 with one OK line for the tuning-like fixture and packages/shellscript', async () => {
    for (const target of [TUNING, SHELLSCRIPT_PACKAGE]) {
      const result = await run(['validate', target]);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^OK: .*\n$/);
    }
  });

  it('exits 1 and lists the problems for a broken package', async () => {
    const result = await run(['validate', join(root, 'no-such-package')]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^INVALID: .*1 problem/);
  });
});

describe('the tuning-like package on a chrooted host', () => {
  it('runs apply as a no-op and config/config-check, naming drop-ins after the SCR package', async () => {
    placePackage(root, COPY_DIR, TUNING, {
      'sysctl.conf': 'vm.swappiness=10\nnet.core.somaxconn=4096\n',
      'ulimit.conf': 'nofile=65536\n',
    });
    const apply = await run(['apply', root, COPY_DIR]);
    expect(apply.code).toBe(0);
    expect(apply.stderr).toContain('WARNING:root: There are no apply steps defined. This will be ran as a no-op.');

    const config = await run(['config', root, COPY_DIR]);
    expect(config.code).toBe(0);
    expect(config.stdout).toContain('tuning sysctl applied');
    expect(readFileSync(join(root, 'etc/sysctl.d/999-sysctl-tuning.conf'), 'utf8')).toBe(
      'vm.swappiness=10\nnet.core.somaxconn=4096\n',
    );
    expect(readFileSync(join(root, 'etc/security/limits.d/999-sysctl-tuning.conf'), 'utf8')).toBe(
      '* hard nofile 65536\n',
    );
    expect((await run(['config-check', root, COPY_DIR])).code).toBe(0);
    expect(readFileSync(join(root, 'var/lib/skyhook/demo/flags/check_results'), 'utf8')).toBe(
      'update_settings_check.sh False',
    );
  });
});
