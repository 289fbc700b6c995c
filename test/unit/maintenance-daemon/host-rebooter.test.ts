/**
 * The maintenance daemon's real reboot runs what a Skyhook reboot interrupt runs on the host: the
 * configured reboot command inside nsenter into PID 1, as the reboot pod's script does; a failing
 * command is an error naming it. Run for real with a stub nsenter on PATH.
 */
import { describe, expect, it } from '@jest/globals';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSettings } from '../../../src/agent/settings.js';
import { hostRebootCommands, hostRebooter, runCommand } from '../../../src/maintenance-daemon/host-rebooter.js';
import { buildRebootPod } from '../../../src/templates/reboot-pod.js';
import { rebootPlan } from '../../../src/templates/interrupt-plan.js';

describe('the host rebooter', () => {
  it("runs SKYHOOK_AGENT_REBOOT_COMMAND through nsenter into the host's PID 1, like the reboot pod", () => {
    const defaults = readSettings({}).interruptCommands;
    expect(hostRebootCommands(defaults)).toEqual([
      ['nsenter', '-t', '1', '-m', '-u', '-i', '-n', '-p', '--', 'reboot'],
    ]);
    const systemd = readSettings({ SKYHOOK_AGENT_REBOOT_COMMAND: 'systemctl reboot' }).interruptCommands;
    const argv = hostRebootCommands(systemd)[0]!;
    expect(argv.slice(-2)).toEqual(['systemctl', 'reboot']);
    // The reboot pod's script runs exactly this line for a reboot interrupt.
    const pod = buildRebootPod({
      nodeOp: {
        apiVersion: 'skyhook.nvidia.com/v1alpha1',
        kind: 'NodeOp',
        metadata: { name: 'op', namespace: 'skyhook', uid: 'u' },
        spec: { command: ['true'] },
      } as never,
      node: 'n1',
      jobName: 'job',
      plan: rebootPlan(systemd),
      settings: { helperImage: 'img' } as never,
    });
    expect(pod.spec?.containers[0]?.command?.[2]).toContain(`${argv.join(' ')} ||`);
  });

  it('runs the commands for real and rejects with the failing one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'host-rebooter-'));
    const log = join(dir, 'calls');
    const nsenter = join(dir, 'nsenter');
    writeFileSync(
      nsenter,
      `#!/bin/sh\necho "$*" >> ${log}\n[ "$NSENTER_FAIL" = 1 ] && { echo boom >&2; exit 3; }\nexit 0\n`,
    );
    chmodSync(nsenter, 0o755);
    // An explicit environment: never the machine's nsenter (jest's process.env does not reach children).
    const env = (fail: boolean): NodeJS.ProcessEnv => ({
      PATH: `${dir}:/usr/bin:/bin`,
      NSENTER_FAIL: fail ? '1' : '0',
    });
    const commands = readSettings({}).interruptCommands;
    try {
      await hostRebooter({ commands, run: (argv) => runCommand(argv, env(false)) }).reboot();
      expect(readFileSync(log, 'utf8')).toBe('-t 1 -m -u -i -n -p -- reboot\n');
      await expect(hostRebooter({ commands, run: (argv) => runCommand(argv, env(true)) }).reboot()).rejects.toThrow(
        /nsenter -t 1 -m -u -i -n -p -- reboot failed: .*boom/s,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
