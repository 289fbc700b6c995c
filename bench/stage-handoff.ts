/**
 * Where the time goes between a stage's end on a node and the start of the node's next stage, hop by
 * hop, from the API server's audit log: every timestamp is the API server's own, so no two clocks
 * (or two watches' lags) are compared. Per handoff:
 *
 * 1. `nodeOpNoticesEnd`: the stage pod's last status write by its kubelet (it ended) → the NodeOp's
 *    status written (the NodeOp controller saw the pod, wrote the Job's status, then the NodeOp's).
 * 2. `skyhookWait`: → the Skyhook controller's first write for the node (received): the NodeOp's watch
 *    event, the SCR's queue behind the pass in flight, the plan.
 * 3. `skyhookWrites`: → the next stage's NodeOp created: that pass's writes in crash-safe order
 *    (the node state, the node-metadata ConfigMap, the NodeOp).
 * 4. `nodeOpStartsNext`: → the next stage's pod created (the NodeOp controller created the Job, then
 *    its pod).
 *
 * The benchmark's objects are named by the operator's deterministic names, which carry the stage and
 * the node: `<scr>-<package>-<version>-<stage>-<node>-<hash>` for the NodeOp, its Job and pod after it.
 * Pure, unit-tested.
 */
import type { AuditEvent } from './audit-writes.js';
import { CLIENT_NODE_USER_AGENT } from './audit-writes.js';
import { type Summary, summarize } from './stats.js';

export const HANDOFF_HOPS = ['nodeOpNoticesEnd', 'skyhookWait', 'skyhookWrites', 'nodeOpStartsNext'] as const;
export type HandoffHop = (typeof HANDOFF_HOPS)[number];

export interface StageHandoffs {
  /** Handoffs found (a node's stage followed by its next stage). */
  count: number;
  hops: Record<HandoffHop, Summary>;
  /** From the stage's end to the next stage's pod: the sum of the hops. */
  total: Summary;
}

interface Write {
  receivedMs: number;
  doneMs: number;
}

const ms = (timestamp: string | undefined): number => (timestamp ? Date.parse(timestamp) : NaN);

/** The writes of one kind for one (stage, node), in the order the API server answered them. */
class WriteIndex {
  private readonly writes = new Map<string, Write[]>();

  add(kind: string, stage: string, node: string, write: Write): void {
    const key = `${kind} ${stage} ${node}`;
    const writes = this.writes.get(key) ?? [];
    writes.push(write);
    this.writes.set(key, writes);
  }

  of(kind: string, stage: string, node: string): Write[] {
    return (this.writes.get(`${kind} ${stage} ${node}`) ?? []).sort((a, b) => a.doneMs - b.doneMs);
  }
}

/**
 * `stages`: the package's stages in the order each node runs them (`apply`, `config`); `nodePattern`
 * the simulated nodes' names (`node-\d+`).
 */
export function stageHandoffs(
  events: readonly AuditEvent[],
  stages: readonly string[],
  nodePattern = 'node-\\d+',
): StageHandoffs {
  const opName = new RegExp(`-(${stages.join('|')})-(${nodePattern})-[0-9a-f]{8}`);
  const index = new WriteIndex();
  const nodes = new Set<string>();
  for (const event of events) {
    const ref = event.objectRef ?? {};
    const write = { receivedMs: ms(event.requestReceivedTimestamp), doneMs: ms(event.stageTimestamp) };
    if ((event.responseStatus?.code ?? 200) >= 300 || !Number.isFinite(write.doneMs)) continue;
    const ours = event.userAgent?.startsWith(CLIENT_NODE_USER_AGENT) ?? false;
    const request = `${event.verb} ${ref.resource}${ref.subresource ? `/${ref.subresource}` : ''}`;
    if (ours && request === 'patch nodes/status' && ref.name) {
      index.add('node', '', ref.name, write);
      continue;
    }
    const match = opName.exec(ref.name ?? '');
    if (!match) continue;
    const [, stage, node] = match as unknown as [string, string, string];
    nodes.add(node);
    if (!ours && request === 'patch pods/status') index.add('podStatus', stage, node, write);
    else if (ours && request === 'patch nodeops/status') index.add('opStatus', stage, node, write);
    else if (ours && request === 'create nodeops') index.add('opCreate', stage, node, write);
    else if (ours && request === 'create pods') index.add('podCreate', stage, node, write);
  }

  const hops = Object.fromEntries(HANDOFF_HOPS.map((hop) => [hop, [] as number[]])) as Record<HandoffHop, number[]>;
  const totals: number[] = [];
  for (const node of nodes)
    for (const [i, stage] of stages.slice(0, -1).entries()) {
      const next = stages[i + 1]!;
      const ended = index.of('podStatus', stage, node).at(-1);
      const opStatus = index.of('opStatus', stage, node).at(-1);
      const opCreated = index.of('opCreate', next, node)[0];
      const podCreated = index.of('podCreate', next, node)[0];
      if (!ended || !opStatus || !opCreated || !podCreated) continue;
      const firstWrite = index.of('node', '', node).find((w) => w.receivedMs >= opStatus.doneMs);
      if (!firstWrite || firstWrite.receivedMs > opCreated.receivedMs) continue;
      hops.nodeOpNoticesEnd.push(opStatus.doneMs - ended.doneMs);
      hops.skyhookWait.push(firstWrite.receivedMs - opStatus.doneMs);
      hops.skyhookWrites.push(opCreated.doneMs - firstWrite.receivedMs);
      hops.nodeOpStartsNext.push(podCreated.doneMs - opCreated.doneMs);
      totals.push(podCreated.doneMs - ended.doneMs);
    }
  return {
    count: totals.length,
    hops: Object.fromEntries(HANDOFF_HOPS.map((hop) => [hop, summarize(hops[hop])])) as Record<HandoffHop, Summary>,
    total: summarize(totals),
  };
}
