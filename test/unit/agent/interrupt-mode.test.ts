/**
 * Interrupt mode through the agent CLI, chrooted into a temp root where the reboot and service
 * commands are stub scripts: nothing on this machine is rebooted or restarted.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  agentEnv,
  buildAgentCli,
  LOG_DIR,
  makeRootfs,
  runAgentProcess,
  STATE_DIR,
  writeScript,
} from '../../agent/harness.js';

const COPY_DIR = '/var/lib/skyhook/demo/tuning-1.1.0-0f0e-1';
const RESOURCE_ID = 'demo-0f0e-1_tuning_1.1.0';
let cli: ReturnType<typeof buildAgentCli>;
let root: string;

beforeAll(() => {
  cli = buildAgentCli();
});
afterAll(() => {
  cli.cleanup();
  rmSync(root, { recursive: true, force: true });
});
beforeEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = makeRootfs();
  // Each stub records its call; `fail-for <word>` makes it fail when that word is an argument.
  writeScript(
    join(root, 'stub/cmd'),
    '#!/bin/sh\necho "$0 $*" >> /stub/calls\nfor a in "$@"; do [ "$a" = "$FAIL_FOR" ] && exit 1; done\nexit 0\n',
  );
  writeScript(join(root, 'stub/killed'), '#!/bin/sh\necho "killed $*" >> /stub/calls\nkill -TERM $$\nsleep 5\n');
  writeScript(join(root, COPY_DIR, 'keep'), '');
});

const stubs = {
  SKYHOOK_AGENT_REBOOT_COMMAND: '/stub/cmd reboot',
  SKYHOOK_AGENT_DAEMON_RELOAD_COMMAND: '/stub/cmd daemon-reload',
  SKYHOOK_AGENT_SERVICE_RESTART_COMMAND: '/stub/cmd restart',
  SKYHOOK_AGENT_RESTART_ALL_SERVICES_COMMAND: '/stub/cmd procps force-reload',
};
const b64 = (data: unknown): string => Buffer.from(JSON.stringify(data)).toString('base64');
const interrupt = (data: unknown, env: Record<string, string> = {}) =>
  runAgentProcess(cli.launcher, ['interrupt', root, COPY_DIR, b64(data)], agentEnv({ ...stubs, ...env }));
const calls = (): string[] =>
  existsSync(join(root, 'stub/calls'))
    ? readFileSync(join(root, 'stub/calls'), 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => l.trimEnd())
    : [];
const flagDir = (): string => join(root, STATE_DIR, 'interrupts/flags', RESOURCE_ID);

describe('node_restart', () => {
  it('writes node_restart_0.complete, logs the command, and does not reboot again on a second run', async () => {
    const first = await interrupt({ type: 'node_restart' });
    expect(first.code).toBe(0);
    expect(calls()).toEqual(['/stub/cmd reboot']);
    expect(readFileSync(join(flagDir(), 'node_restart_0.complete'), 'utf8')).toMatch(/^\d+\.\d+$/);
    const logDir = join(root, LOG_DIR, 'tuning/1.1.0/interrupts');
    const [log] = readdirSync(logDir).filter((n) => n.endsWith('.log'));
    expect(log).toMatch(/^node_restart_0-\d{4}-\d\d-\d\d-\d{6}\.log$/);
    expect(readFileSync(join(logDir, log ?? ''), 'utf8').startsWith('/stub/cmd reboot\n')).toBe(true);

    const second = await interrupt({ type: 'node_restart' });
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(`Skipping interrupt node_restart_0 because it was already run for ${RESOURCE_ID}`);
    expect(calls()).toEqual(['/stub/cmd reboot']);
  });

  it('keeps the flag when the reboot kills the agent with SIGTERM (exit 1), so the rerun after boot is a no-op', async () => {
    const killed = await interrupt({ type: 'node_restart' }, { SKYHOOK_AGENT_REBOOT_COMMAND: '/stub/killed' });
    expect(killed.code).toBe(1);
    expect(killed.stdout).toContain('return_code: -15');
    expect(existsSync(join(flagDir(), 'node_restart_0.complete'))).toBe(true);
    expect((await interrupt({ type: 'node_restart' }, { SKYHOOK_AGENT_REBOOT_COMMAND: '/stub/killed' })).code).toBe(0);
    expect(calls()).toEqual(['killed']);
  });

  it('removes the flag of a reboot command that failed, so it is tried again', async () => {
    expect((await interrupt({ type: 'node_restart' }, { FAIL_FOR: 'reboot' })).code).toBe(1);
    expect(existsSync(join(flagDir(), 'node_restart_0.complete'))).toBe(false);
    expect((await interrupt({ type: 'node_restart' })).code).toBe(0);
    expect(calls()).toEqual(['/stub/cmd reboot', '/stub/cmd reboot']);
  });
});

describe('service_restart and restart_all_services', () => {
  it('reloads systemd, restarts each service once, and retries only the command that failed', async () => {
    const failed = await interrupt(
      { type: 'service_restart', services: ['containerd', 'kubelet'] },
      { FAIL_FOR: 'kubelet' },
    );
    expect(failed.code).toBe(1);
    expect(readdirSync(flagDir()).sort()).toEqual(['service_restart_0.complete', 'service_restart_1.complete']);
    expect((await interrupt({ type: 'service_restart', services: ['containerd', 'kubelet'] })).code).toBe(0);
    expect(calls()).toEqual([
      '/stub/cmd daemon-reload',
      '/stub/cmd restart containerd',
      '/stub/cmd restart kubelet',
      '/stub/cmd restart kubelet',
    ]);
    expect(readdirSync(flagDir()).sort()).toEqual([
      'service_restart_0.complete',
      'service_restart_1.complete',
      'service_restart_2.complete',
    ]);
  });

  it('runs the restart-all command once', async () => {
    expect((await interrupt({ type: 'restart_all_services' })).code).toBe(0);
    expect((await interrupt({ type: 'restart_all_services' })).code).toBe(0);
    expect(calls()).toEqual(['/stub/cmd procps force-reload']);
    expect(existsSync(join(flagDir(), 'restart_all_services_0.complete'))).toBe(true);
  });
});

describe('no_op, script_interrupt and bad input', () => {
  it('records no_op.complete and runs nothing; script_interrupt runs nothing either', async () => {
    expect((await interrupt({ type: 'no_op' })).code).toBe(0);
    expect(readdirSync(flagDir())).toEqual(['no_op.complete']);
    expect((await interrupt({ type: 'script_interrupt' })).code).toBe(0);
    expect(calls()).toEqual([]);
  });

  it('fails on an unknown type, undecodable data or a malformed SKYHOOK_RESOURCE_ID', async () => {
    expect((await interrupt({ type: 'explode' })).stderr).toContain('Unknown interrupt explode');
    const garbage = await runAgentProcess(cli.launcher, ['interrupt', root, COPY_DIR, '!!!'], agentEnv(stubs));
    expect(garbage.code).toBe(1);
    const badId = await interrupt({ type: 'node_restart' }, { SKYHOOK_RESOURCE_ID: 'no-underscores' });
    expect(badId.code).toBe(1);
    expect(calls()).toEqual([]);
  });
});
