/** Arguments, environment settings, interrupt data and step commands: the agent's inputs. */
import { describe, expect, it } from '@jest/globals';
import { parseAgentArgs } from '../../../src/agent/args.js';
import { parseResourceId, readSettings } from '../../../src/agent/settings.js';
import { decodeInterrupt, keepsFlagAfterFailure } from '../../../src/agent/interrupts.js';
import { stepEnvironment, substituteEnvArguments, withSystemPath } from '../../../src/agent/step-command.js';
import { hostArgv } from '../../../src/agent/host-exec.js';

describe('parseAgentArgs', () => {
  it('accepts the operator form, the interrupt form and the legacy forms', () => {
    expect(parseAgentArgs(['apply', '/root', '/var/lib/skyhook/x'])).toEqual({
      mode: 'apply',
      rootMount: '/root',
      copyDir: '/var/lib/skyhook/x',
    });
    expect(parseAgentArgs(['interrupt', '/root', '/c', 'e30='])).toEqual({
      mode: 'interrupt',
      rootMount: '/root',
      copyDir: '/c',
      interruptData: 'e30=',
    });
    expect(parseAgentArgs(['interrupt', '/c', 'e30='])).toEqual({
      mode: 'interrupt',
      rootMount: '/root',
      copyDir: '/c',
      interruptData: 'e30=',
    });
    expect(parseAgentArgs(['config', '/c'])).toEqual({ mode: 'config', rootMount: '/root', copyDir: '/c' });
  });

  it.each([[[]], [['apply']], [['a', 'b', 'c', 'd', 'e']]])('rejects %j', (args) => {
    expect(() => parseAgentArgs(args)).toThrow(/expected <mode> <rootMount> <copyDir>/);
  });
});

describe('readSettings', () => {
  it("has upstream's defaults", () => {
    const s = readSettings({});
    expect(s).toMatchObject({
      resourceId: '',
      dataDir: '/skyhook-package',
      stateDir: '/etc/skyhook',
      logDir: '/var/log/skyhook',
      writeLogs: true,
      bufferLimit: 8192,
      copyResolv: true,
      alwaysRunStep: false,
      stepDelayMs: 0,
    });
    expect(s.interruptCommands).toEqual({
      reboot: ['reboot'],
      daemonReload: ['systemctl', 'daemon-reload'],
      restartService: ['systemctl', 'restart'],
      restartAllServices: ['service', 'procps', 'force-reload'],
    });
  });

  it('reads booleans the Python way and commands as words', () => {
    const s = readSettings({
      SKYHOOK_AGENT_WRITE_LOGS: 'False',
      COPY_RESOLV: 'no',
      OVERLAY_ALWAYS_RUN_STEP: 'TRUE',
      SKYHOOK_AGENT_REBOOT_COMMAND: ' /stub/reboot  now ',
    });
    expect([s.writeLogs, s.copyResolv, s.alwaysRunStep]).toEqual([false, false, true]);
    expect(s.interruptCommands.reboot).toEqual(['/stub/reboot', 'now']);
    expect(() => readSettings({ SKYHOOK_AGENT_STEP_DELAY_MS: 'soon' })).toThrow(/SKYHOOK_AGENT_STEP_DELAY_MS/);
  });

  it('splits SKYHOOK_RESOURCE_ID into exactly three fields', () => {
    expect(parseResourceId('demo-0f0e-1_tuning_1.1.0')).toEqual({
      id: 'demo-0f0e-1',
      packageName: 'tuning',
      packageVersion: '1.1.0',
    });
    expect(() => parseResourceId('')).toThrow();
    expect(() => parseResourceId('a_b_c_d')).toThrow();
  });
});

describe('decodeInterrupt', () => {
  const commands = readSettings({}).interruptCommands;
  const b64 = (data: unknown): string => Buffer.from(JSON.stringify(data)).toString('base64');

  it('maps each type to its commands', () => {
    expect(decodeInterrupt(b64({ type: 'node_restart' }), commands)).toEqual({
      type: 'node_restart',
      commands: [['reboot']],
    });
    expect(
      decodeInterrupt(b64({ type: 'service_restart', services: ['containerd', 'kubelet'] }), commands).commands,
    ).toEqual([
      ['systemctl', 'daemon-reload'],
      ['systemctl', 'restart', 'containerd'],
      ['systemctl', 'restart', 'kubelet'],
    ]);
    expect(decodeInterrupt(b64({ type: 'restart_all_services' }), commands).commands).toEqual([
      ['service', 'procps', 'force-reload'],
    ]);
    expect(decodeInterrupt(b64({ type: 'no_op' }), commands).commands).toEqual([]);
    expect(decodeInterrupt(b64({ type: 'script_interrupt' }), commands).commands).toEqual([]);
  });

  it('rejects missing, undecodable, untyped, unknown and malformed data', () => {
    expect(() => decodeInterrupt(undefined, commands)).toThrow();
    expect(() => decodeInterrupt('%%%', commands)).toThrow(/base64 encoded/);
    expect(() => decodeInterrupt(b64({ services: [] }), commands)).toThrow(/base64 encoded/);
    expect(() => decodeInterrupt(b64({ type: 'reboot' }), commands)).toThrow(/Unknown interrupt reboot/);
    expect(() => decodeInterrupt(b64({ type: 'service_restart', services: 'kubelet' }), commands)).toThrow(/services/);
  });

  it('keeps the flag only of a reboot killed by SIGTERM', () => {
    expect(keepsFlagAfterFailure('node_restart', -15)).toBe(true);
    expect(keepsFlagAfterFailure('node_restart', 1)).toBe(false);
    expect(keepsFlagAfterFailure('service_restart', -15)).toBe(false);
  });
});

describe('step commands', () => {
  it('substitutes env: arguments and reports every missing variable', () => {
    expect(
      substituteEnvArguments({ path: 'a.sh', arguments: ['x', 'env:A', 'env:'] }, { A: '1', '': 'empty-name' }),
    ).toEqual({ ok: true, arguments: ['x', '1', 'empty-name'] });
    expect(substituteEnvArguments({ path: 'a.sh', arguments: ['env:B', 'env:C'] }, {})).toEqual({
      ok: false,
      errors: [
        'a.sh: Expected environment variable did not exist: B',
        'a.sh: Expected environment variable did not exist: C',
      ],
    });
  });

  it('layers the environment: agent, then step env, then SKYHOOK_DIR/STEP_ROOT', () => {
    const env = stepEnvironment(
      { A: 'agent', SKYHOOK_DIR: 'agent', PATH: '/opt/bin', UNSET: undefined },
      { A: 'step', STEP_ROOT: 'step' },
      '/copy',
    );
    expect(env).toMatchObject({ A: 'step', SKYHOOK_DIR: '/copy', STEP_ROOT: '/copy/skyhook_dir' });
    expect(env).not.toHaveProperty('UNSET');
    expect(env['PATH']).toBe('/opt/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin');
    expect(withSystemPath('/bin:/usr/sbin')).toBe('/bin:/usr/sbin:/usr/local/sbin:/usr/local/bin:/usr/bin:/sbin');
  });

  it('enters the root mount with chroot, unless it is `local`', () => {
    const base = {
      chrootCommand: 'chroot',
      cwd: '/copy',
      command: ['/copy/skyhook_dir/a.sh', 'x'],
      makeExecutable: true,
    };
    const argv = hostArgv({ ...base, rootMount: '/root' });
    expect(argv.slice(0, 4)).toEqual(['chroot', '/root', '/bin/sh', '-c']);
    expect(argv[4]).toContain('chmod ugo+x');
    expect(argv.slice(5)).toEqual(['skyhook-agent', '/copy', '/copy/skyhook_dir/a.sh', 'x']);
    expect(hostArgv({ ...base, rootMount: 'local', makeExecutable: false })[0]).toBe('/bin/sh');
    expect(hostArgv({ ...base, rootMount: 'local', makeExecutable: false })[2]).not.toContain('chmod');
  });
});
