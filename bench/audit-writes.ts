/**
 * API writes counted from the API server's audit log (startControlPlane `auditLog: true`, which logs
 * only write verbs at Metadata level): who wrote what, and how many of those writes were refused.
 * `countWrites` counts one client (the operator, by its User-Agent); `countClusterWrites` counts every
 * writer of the cluster, so what our objects cost the Job controller and the (simulated) kubelet is
 * seen beside what the operator writes itself (issue 18: writes of the whole cluster per node-stage).
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';

/** client-node's User-Agent (`kubernetes-client-javascript/<version>`): our operator's requests. */
export const CLIENT_NODE_USER_AGENT = 'kubernetes-client-javascript/';

export interface WriteCount {
  total: number;
  /** Writes the API server refused (conflicts, not found, …), included in total. */
  refused: number;
  /** By `verb resource[/subresource]`. */
  byRequest: Record<string, number>;
}

export interface AuditEvent {
  stage?: string;
  verb?: string;
  userAgent?: string;
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  /** When the API server received the request and when it answered (RFC 3339, microseconds). */
  requestReceivedTimestamp?: string;
  stageTimestamp?: string;
}

/** Where the log ends now: count from here to leave out what happened before. */
export function auditLogEnd(path: string): number {
  return statSync(path).size;
}

function readFrom(path: string, offset: number): string {
  const length = statSync(path).size - offset;
  if (length <= 0) return '';
  const buffer = Buffer.alloc(length);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, buffer, 0, length, offset);
  } finally {
    closeSync(fd);
  }
  return buffer.toString('utf8');
}

/** The completed write requests of the log after `fromOffset`, one parsed event each. */
export function auditWritesFrom(path: string, fromOffset: number): AuditEvent[] {
  return completedWrites(readFrom(path, fromOffset));
}

/** The completed write requests of the log's text, one parsed event each. */
function completedWrites(text: string): AuditEvent[] {
  const events: AuditEvent[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const event = JSON.parse(line) as AuditEvent;
    if (event.stage === 'ResponseComplete') events.push(event);
  }
  return events;
}

function emptyCount(): WriteCount {
  return { total: 0, refused: 0, byRequest: {} };
}

function add(count: WriteCount, event: AuditEvent): void {
  const ref = event.objectRef;
  const key = `${event.verb} ${ref?.resource ?? '?'}${ref?.subresource ? `/${ref.subresource}` : ''}`;
  count.total++;
  if ((event.responseStatus?.code ?? 200) >= 300) count.refused++;
  count.byRequest[key] = (count.byRequest[key] ?? 0) + 1;
}

/** The completed write requests after `fromOffset` whose User-Agent starts with `userAgentPrefix`. */
export function countWrites(path: string, fromOffset: number, userAgentPrefix: string): WriteCount {
  return writesOf(auditWritesFrom(path, fromOffset), userAgentPrefix);
}

/** `countWrites` over parsed audit events (one read of the log serves every count). */
export function writesOf(events: readonly AuditEvent[], userAgentPrefix: string): WriteCount {
  const count = emptyCount();
  for (const event of events) if (event.userAgent?.startsWith(userAgentPrefix)) add(count, event);
  return count;
}

/**
 * Who writes, by User-Agent (in the sandbox every component authenticates as the same admin, so
 * the user name tells nothing; client-go adds the controller's name to the controller-manager's
 * User-Agent: `kube-controller-manager/v1.37.2 (…) kubernetes/$Format/job-controller`).
 */
export const WRITERS = [
  'operator',
  'jobController',
  'otherControllers',
  'scheduler',
  'kubelet',
  'apiserver',
  'kubectl',
  'other',
] as const;
export type Writer = (typeof WRITERS)[number];

export function writerOf(userAgent: string | undefined): Writer {
  const agent = userAgent ?? '';
  if (agent.startsWith(CLIENT_NODE_USER_AGENT)) return 'operator';
  if (agent.startsWith('kube-controller-manager/'))
    return agent.endsWith('/job-controller') ? 'jobController' : 'otherControllers';
  if (agent.startsWith('kube-scheduler/')) return 'scheduler';
  // kwok plays every simulated node's kubelet; a real node's kubelet says `kubelet/…`.
  if (agent.startsWith('kwok/') || agent.startsWith('kubelet/')) return 'kubelet';
  if (agent.startsWith('kube-apiserver/')) return 'apiserver';
  if (agent.startsWith('kubectl/')) return 'kubectl';
  return 'other';
}

/**
 * Writes made because time passed, not because of the work: node heartbeats (the kubelets' Leases in
 * `kube-node-lease`) and the API servers' own identity Leases. They grow with wall time × nodes
 * whatever the operator does, so they are counted apart from the whole-cluster figure.
 */
export function isHeartbeat(event: { verb?: string; objectRef?: AuditEvent['objectRef'] }): boolean {
  const ref = event.objectRef;
  return ref?.resource === 'leases' && (ref.namespace === 'kube-node-lease' || ref.namespace === 'kube-system');
}

export interface ClusterWrites {
  /** Every write of the window except heartbeats: the work's cost to the API server (and etcd). */
  total: number;
  byWriter: Record<Writer, WriteCount>;
  /** Node and API server heartbeats (Leases), left out of `total` and `byWriter`. */
  heartbeats: WriteCount;
}

/** Every completed write after `fromOffset`, by writer, heartbeats apart. */
export function countClusterWrites(path: string, fromOffset: number): ClusterWrites {
  return clusterWritesOf(auditWritesFrom(path, fromOffset));
}

/** `countClusterWrites` over parsed audit events (pure, for tests). */
export function clusterWritesOf(events: readonly AuditEvent[]): ClusterWrites {
  const byWriter = Object.fromEntries(WRITERS.map((w) => [w, emptyCount()])) as Record<Writer, WriteCount>;
  const writes: ClusterWrites = { total: 0, byWriter, heartbeats: emptyCount() };
  for (const event of events) {
    if (event.stage !== undefined && event.stage !== 'ResponseComplete') continue;
    if (isHeartbeat(event)) {
      add(writes.heartbeats, event);
      continue;
    }
    writes.total++;
    add(byWriter[writerOf(event.userAgent)], event);
  }
  return writes;
}

export interface WritesPerNodeStage {
  nodeStages: number;
  /** Every writer's writes but heartbeats, per node-stage. */
  wholeCluster: number;
  operator: number;
  /** Per writer (writers with no write left out), per node-stage. */
  byWriter: Partial<Record<Writer, number>>;
  /** Per writer, per `verb resource`, per node-stage: where each writer's share goes. */
  byRequest: Partial<Record<Writer, Record<string, number>>>;
  heartbeatsPerNodeStage: number;
  refused: number;
}

/**
 * The breakdown the benchmarks print: the whole cluster's writes per node-stage (a node-stage is one
 * package stage run on one node: one stage NodeOp and one Job), per writer and per request.
 */
export function writesPerNodeStage(writes: ClusterWrites, nodeStages: number): WritesPerNodeStage {
  const per = (n: number): number => (nodeStages > 0 ? Math.round((n / nodeStages) * 100) / 100 : Number.NaN);
  const byWriter: Partial<Record<Writer, number>> = {};
  const byRequest: Partial<Record<Writer, Record<string, number>>> = {};
  let refused = 0;
  for (const writer of WRITERS) {
    const count = writes.byWriter[writer];
    refused += count.refused;
    if (count.total === 0) continue;
    byWriter[writer] = per(count.total);
    byRequest[writer] = Object.fromEntries(
      Object.entries(count.byRequest)
        .sort(([, a], [, b]) => b - a)
        .map(([request, n]) => [request, per(n)]),
    );
  }
  return {
    nodeStages,
    wholeCluster: per(writes.total),
    operator: per(writes.byWriter.operator.total),
    byWriter,
    byRequest,
    heartbeatsPerNodeStage: per(writes.heartbeats.total),
    refused,
  };
}
