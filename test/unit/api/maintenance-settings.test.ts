/**
 * A MaintenancePolicy's protocol fields reach the node daemon: its own file paths, its reboot
 * sentinel (a path, or a command whose exit code 0 means "reboot required"), the reboot delay, and
 * each protocol switched off.
 */
import { describe, expect, it } from '@jest/globals';
import { effectiveDrainOptions, effectiveProtocols, lockTtlMs } from '../../../src/api/maintenance-settings.js';
import { runSentinelCommand } from '../../../src/maintenance-daemon/host.js';

describe('effectiveProtocols', () => {
  it('takes the policy paths, sentinel and delay over the defaults', () => {
    expect(
      effectiveProtocols({
        protocols: {
          maintenance: { requiredPath: '/run/m-required', inProgressPath: '/run/m-doing' },
          reboot: { sentinelPath: '/run/needs-reboot', rebootDelay: '90s' },
        },
      }),
    ).toEqual({
      maintenance: { requiredPath: '/run/m-required', inProgressPath: '/run/m-doing' },
      reboot: { sentinel: { path: '/run/needs-reboot' }, rebootDelayMs: 90_000 },
    });
    expect(effectiveProtocols({ protocols: { reboot: { sentinelCommand: ['test', '-e', '/x'] } } }).reboot).toEqual({
      sentinel: { command: ['test', '-e', '/x'] },
      rebootDelayMs: 0,
    });
  });

  it('leaves out a protocol switched off (enabled: false)', () => {
    expect(effectiveProtocols({ protocols: { maintenance: { enabled: false }, reboot: { enabled: false } } })).toEqual(
      {},
    );
  });

  it('turns drainOptions.enabled: false into no drain and reads lockTTL', () => {
    expect(effectiveDrainOptions({ drainOptions: { enabled: false } })).toBeUndefined();
    expect(effectiveDrainOptions({})).toMatchObject({ enabled: true, force: true, deleteEmptyDirData: true });
    expect(lockTtlMs({ lockTTL: '30m' })).toBe(1_800_000);
  });
});

describe('the reboot sentinel command', () => {
  it('says a reboot is required when it exits 0, and not otherwise', async () => {
    await expect(runSentinelCommand(['true'])).resolves.toBe(true);
    await expect(runSentinelCommand(['false'])).resolves.toBe(false);
  });
});
