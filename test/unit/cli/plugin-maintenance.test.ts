/**
 * `maintenance status` rows and `maintenance release` decisions (pure): what holding, queued, stale
 * and orphaned mean, what a release changes, and what it refuses without --force.
 */
import { describe, expect, it } from '@jest/globals';
import type { MaintenancePolicy } from '../../../src/api/maintenance-policy.js';
import { MAINTENANCE_LEASE, type LeaseState } from '../../../src/api/maintenance-protocol.js';
import { plannedMaintenance, renderMaintenance } from '../../../src/cli/plan/maintenance.js';
import { releaseChanges } from '../../../src/cli/plugin/maintenance-release.js';
import { maintenanceRow, maintenanceRows, type NodeFacts } from '../../../src/cli/plugin/maintenance-view.js';

const NOW = Date.parse('2026-11-24T12:00:00Z');
const T0 = '2026-11-24T11:50:00Z';
const CLAIM = 'skyhook.nvidia.com/maintenance_nightly';

function policy(status: MaintenancePolicy['status'] = {}, lockTTL?: string): MaintenancePolicy {
  return {
    apiVersion: 'skyhook.nvidia.com/v1alpha1',
    kind: 'MaintenancePolicy',
    metadata: { name: 'nightly' },
    spec: { maxConcurrent: 1, ...(lockTTL ? { lockTTL } : {}) },
    status,
  };
}

const node = (name: string, annotations: Record<string, string> = {}, unschedulable = false): NodeFacts => ({
  name,
  exists: true,
  unschedulable,
  annotations,
});

function lease(nodeName: string, parts: Partial<LeaseState>, heartbeatSecondsAgo = 3): LeaseState {
  return { node: nodeName, renewedAtMs: NOW - heartbeatSecondsAgo * 1000, ...parts };
}

const request = { protocol: 'maintenance' as const, requestedAt: T0 };
const grant = (phase: 'granted' | 'drained' = 'drained') => ({
  policy: 'nightly',
  requestedAt: T0,
  grantedAt: T0,
  phase,
});

describe('maintenance status rows', () => {
  it('a holder, a queued node and a node with only a claim', () => {
    const p = policy({
      holders: [{ node: 'a', protocol: 'maintenance', phase: 'InProgress', requestedAt: T0, grantedAt: T0 }],
      queue: [{ node: 'b', protocol: 'reboot', requestedAt: T0, reason: 'MaxConcurrent', message: 'slot held by a' }],
    });
    const rows = maintenanceRows(
      [node('a', { [CLAIM]: 'true' }, true), node('b'), node('c', { [CLAIM]: 'true' }, true), node('d')],
      [lease('a', { request, grant: grant() }), lease('b', { request: { protocol: 'reboot', requestedAt: T0 } })],
      [p],
      NOW,
    );
    expect(rows.map((r) => [r.node, r.state, r.phase ?? r.reason ?? '-', r.stale])).toEqual([
      ['a', 'holding', 'InProgress', false],
      ['b', 'queued', 'MaxConcurrent', false],
      ['c', 'orphaned', '-', false],
    ]);
    expect(rows[1]).toMatchObject({
      policy: 'nightly',
      protocol: 'reboot',
      message: 'slot held by a',
      heartbeatAgeSeconds: 3,
    });
  });

  it('a daemon is stale after the policy lockTTL, else after five minutes', () => {
    const facts = node('a', { [CLAIM]: 'true' }, true);
    const l = lease('a', { request, grant: grant() }, 120);
    expect(maintenanceRow(facts, l, [policy({}, '1m')], NOW).stale).toBe(true);
    expect(maintenanceRow(facts, l, [policy()], NOW).stale).toBe(false);
    expect(maintenanceRow(facts, lease('a', { request, grant: grant() }, 301), [policy()], NOW).stale).toBe(true);
  });

  it('done for the granted request is finishing; a grant for an older request is orphaned', () => {
    const done = { requestedAt: T0, completedAt: T0 };
    expect(maintenanceRow(node('a'), lease('a', { request, grant: grant(), done }), [], NOW).state).toBe('finishing');
    const newer = { ...request, requestedAt: '2026-11-24T11:55:00Z' };
    expect(maintenanceRow(node('a'), lease('a', { request: newer, grant: grant() }), [], NOW).state).toBe('orphaned');
  });
});

describe('maintenance release', () => {
  const leaseRef = { namespace: 'skyhook', name: 'maintenance-a', resourceVersion: '11' };
  const cordoned = { annotations: { [CLAIM]: 'true' }, unschedulable: true };

  it('refuses a live holder without --force, saying how it ends by itself', () => {
    const row = maintenanceRow(
      node('a', cordoned.annotations, true),
      lease('a', { request, grant: grant() }),
      [policy()],
      NOW,
    );
    const refused = releaseChanges({ row, node: cordoned, lease: leaseRef, force: false });
    expect(refused).toEqual({
      refused: expect.stringMatching(/maintenance script has the node.*--force releases it anyway/),
    });
    const reboot = maintenanceRow(
      node('a', cordoned.annotations, true),
      lease('a', { request: { ...request, protocol: 'reboot' }, grant: grant() }),
      [],
      NOW,
    );
    expect(releaseChanges({ row: reboot, node: cordoned, lease: leaseRef, force: false })).toEqual({
      refused: expect.stringMatching(/rebooting or about to/),
    });
  });

  it('--force clears the Lease (under its read resourceVersion) and releases the maintenance claim through the cordon writer', () => {
    const row = maintenanceRow(
      node('a', cordoned.annotations, true),
      lease('a', { request, grant: grant() }),
      [policy()],
      NOW,
    );
    const set = releaseChanges({ row, node: cordoned, lease: leaseRef, force: true });
    expect('refused' in set).toBe(false);
    if ('refused' in set) return;
    expect(set.action).toBe('release the maintenance slot of node a (forced)');
    expect(set.changes.map((c) => [c.target, c.patch])).toEqual([
      [
        { kind: 'Lease', namespace: 'skyhook', name: 'maintenance-a' },
        {
          metadata: {
            annotations: {
              [MAINTENANCE_LEASE.request]: null,
              [MAINTENANCE_LEASE.grant]: null,
              [MAINTENANCE_LEASE.done]: null,
              [MAINTENANCE_LEASE.progress]: null,
            },
            resourceVersion: '11',
          },
        },
      ],
      [
        { kind: 'Node', name: 'a', releaseClaims: [CLAIM] },
        { metadata: { annotations: { [CLAIM]: null } }, spec: { unschedulable: false } },
      ],
    ]);
  });

  it('a stale daemon, a gone node and a left-over cordon are released without --force', () => {
    const stale = maintenanceRow(
      node('a', cordoned.annotations, true),
      lease('a', { request, grant: grant() }, 900),
      [policy()],
      NOW,
    );
    const set = releaseChanges({ row: stale, node: cordoned, lease: leaseRef, force: false });
    expect('refused' in set ? set.refused : set.action).toBe(
      'release the maintenance slot of node a (its daemon last reported 900 s ago)',
    );
    const gone = maintenanceRows([], [lease('a', { request, grant: grant() })], [], NOW)[0]!;
    const goneSet = releaseChanges({ row: gone, lease: leaseRef, force: false });
    expect('refused' in goneSet ? goneSet.refused : goneSet.changes.map((c) => c.target.kind)).toEqual(['Lease']);
    const leftover = maintenanceRow(node('c', cordoned.annotations, true), undefined, [], NOW);
    const leftoverSet = releaseChanges({ row: leftover, node: cordoned, force: false });
    expect('refused' in leftoverSet ? leftoverSet.refused : leftoverSet.changes.map((c) => c.description)).toEqual([
      `remove ${CLAIM} from node c and uncordon it`,
    ]);
  });

  it('another claim keeps the node cordoned; a queued node has nothing to release', () => {
    const both = { annotations: { [CLAIM]: 'true', 'skyhook.nvidia.com/cordon_demo': 'true' }, unschedulable: true };
    const row = maintenanceRow(node('a', both.annotations, true), undefined, [], NOW);
    const set = releaseChanges({ row, node: both, force: false });
    expect('refused' in set ? set : set.changes[0]?.patch).toEqual({ metadata: { annotations: { [CLAIM]: null } } });
    const queued = maintenanceRow(
      node('b'),
      lease('b', { request }),
      [policy({ queue: [{ node: 'b', protocol: 'maintenance', requestedAt: T0, reason: 'MaxConcurrent' }] })],
      NOW,
    );
    const none = releaseChanges({ row: queued, node: { annotations: {}, unschedulable: false }, force: true });
    expect('refused' in none ? none : [none.changes, none.notes]).toEqual([
      [],
      ['node b holds no maintenance slot and no maintenance cordon (queued: MaxConcurrent)'],
    ]);
  });
});

describe('skyhook plan shows maintenance on the selected nodes', () => {
  it('holders and queued nodes, in the words of maintenance status; idle and unselected nodes left out', () => {
    const p = policy({
      holders: [{ node: 'a', protocol: 'maintenance', phase: 'InProgress', requestedAt: T0, grantedAt: T0 }],
      queue: [
        { node: 'b', protocol: 'reboot', requestedAt: T0, reason: 'RebootBlocked', message: 'active alerts: NodeDown' },
      ],
    });
    const rows = maintenanceRows(
      [node('a', { [CLAIM]: 'true' }, true), node('b'), node('c'), node('z', { [CLAIM]: 'true' }, true)],
      [
        lease('a', { request, grant: grant() }),
        lease('b', { request: { protocol: 'reboot', requestedAt: T0 } }),
        lease('c', {}),
      ],
      [p],
      NOW,
    );
    const planned = plannedMaintenance(rows, new Set(['a', 'b', 'c']));
    expect(planned.map((m) => [m.node, m.state])).toEqual([
      ['a', 'holding'],
      ['b', 'queued'],
    ]);
    expect(renderMaintenance(planned)).toEqual([
      '',
      'Node maintenance (MaintenancePolicy):',
      "  a  in maintenance under MaintenancePolicy nightly (InProgress): cordoned under its claim, which this rollout's cordon joins; it counts against a cluster DisruptionBudget",
      '  b  queued for maintenance under MaintenancePolicy nightly (RebootBlocked: active alerts: NodeDown): once granted it is cordoned and drained, whatever this rollout does there',
    ]);
    expect(renderMaintenance([])).toEqual([]);
  });
});
