/** The handoff from one stage to the node's next, hop by hop, from audit events (the API server's clock). */
import { describe, expect, it } from '@jest/globals';
import type { AuditEvent } from '../../../bench/audit-writes.js';
import { stageHandoffs } from '../../../bench/stage-handoff.js';

const OPERATOR = 'kubernetes-client-javascript/1.4.0';
const KUBELET = 'kwok/v0.8.0';
const at = (ms: number): string => new Date(Date.UTC(2026, 10, 25, 3, 0, 0, ms)).toISOString();

function write(
  agent: string,
  verb: string,
  resource: string,
  name: string,
  receivedMs: number,
  doneMs: number,
  extra: Partial<AuditEvent> = {},
): AuditEvent {
  const [plural, subresource] = resource.split('/');
  return {
    stage: 'ResponseComplete',
    verb,
    userAgent: agent,
    objectRef: { resource: plural, ...(subresource ? { subresource } : {}), name },
    requestReceivedTimestamp: at(receivedMs),
    stageTimestamp: at(doneMs),
    ...extra,
  };
}

const op = (stage: string): string => `scr-pkg-1-0-0-${stage}-node-7-0a1b2c3d`;
const job = (stage: string): string => `${op(stage)}-node-7-9f8e7d6c`;

/** node-7: apply ends at 1000; the handoff to config, each hop a known length. */
const handoff: AuditEvent[] = [
  write(KUBELET, 'patch', 'pods/status', `${job('apply')}-0`, 400, 410), // running
  write(KUBELET, 'patch', 'pods/status', `${job('apply')}-0`, 990, 1000), // succeeded
  write(OPERATOR, 'patch', 'jobs/status', job('apply'), 1040, 1070),
  write(OPERATOR, 'patch', 'nodeops/status', op('apply'), 1080, 1100),
  write(OPERATOR, 'patch', 'nodes/status', 'node-7', 1300, 1340), // the Skyhook pass: 200 ms later
  write(OPERATOR, 'update', 'configmaps', 'scr-node-7-metadata-12345678', 1350, 1370),
  write(OPERATOR, 'create', 'nodeops', op('config'), 1380, 1400),
  write(OPERATOR, 'create', 'jobs', job('config'), 1430, 1450),
  write(OPERATOR, 'create', 'pods', `${job('config')}-0`, 1460, 1480),
];

describe('stageHandoffs', () => {
  it('splits the handoff into the NodeOp controller, the Skyhook wait, its writes, and the next start', () => {
    const figures = stageHandoffs(handoff, ['apply', 'config']);
    expect(figures.count).toBe(1);
    expect(figures.hops.nodeOpNoticesEnd.p50).toBe(100);
    expect(figures.hops.skyhookWait.p50).toBe(200);
    expect(figures.hops.skyhookWrites.p50).toBe(100);
    expect(figures.hops.nodeOpStartsNext.p50).toBe(80);
    expect(figures.total.p50).toBe(480);
  });

  it('leaves out a node whose next stage never started, refused writes, and node writes before the stage ended', () => {
    const unfinished = handoff.filter((e) => e.objectRef?.name !== op('config') && e.verb !== 'create');
    expect(stageHandoffs(unfinished, ['apply', 'config']).count).toBe(0);
    const refusedFirst = [
      write(OPERATOR, 'patch', 'nodes/status', 'node-7', 1200, 1210, { responseStatus: { code: 409 } }),
      write(OPERATOR, 'patch', 'nodes/status', 'node-7', 500, 520), // the apply stage's own start
      ...handoff,
    ];
    expect(stageHandoffs(refusedFirst, ['apply', 'config']).hops.skyhookWait.p50).toBe(200);
  });
});
