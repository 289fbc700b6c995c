/**
 * The whole-cluster write count of the benchmarks: each audit event is given to the component that
 * wrote it (by User-Agent), heartbeats are counted apart, and the per-node-stage breakdown adds up.
 */
import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  auditLogEnd,
  clusterWritesOf,
  countClusterWrites,
  countWrites,
  CLIENT_NODE_USER_AGENT,
  writerOf,
  writesPerNodeStage,
} from '../../../bench/audit-writes.js';

const KCM = 'kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/$Format';

function event(userAgent: string, verb: string, resource: string, extra: Record<string, unknown> = {}) {
  const [name, subresource] = resource.split('/');
  return {
    stage: 'ResponseComplete',
    verb,
    userAgent,
    objectRef: { resource: name, ...(subresource ? { subresource } : {}), namespace: 'skyhook' },
    responseStatus: { code: 200 },
    ...extra,
  };
}

describe('writerOf', () => {
  it.each([
    ['kubernetes-client-javascript/2.0.1', 'operator'],
    [`${KCM}/job-controller`, 'jobController'],
    [`${KCM}/node-controller`, 'otherControllers'],
    ['kube-scheduler/v1.37.2 (linux/amd64) kubernetes/$Format/scheduler', 'scheduler'],
    ['kwok/v0.8.0 (linux/amd64)', 'kubelet'],
    ['kubelet/v1.33.13 (linux/amd64) kubernetes/abc', 'kubelet'],
    ['kube-apiserver/v1.37.2 (linux/amd64) kubernetes/$Format', 'apiserver'],
    ['kubectl/v1.37.2 (linux/amd64) kubernetes/$Format', 'kubectl'],
    ['curl/8', 'other'],
    [undefined, 'other'],
  ] as const)('%s is %s', (agent, writer) => {
    expect(writerOf(agent)).toBe(writer);
  });
});

describe('clusterWritesOf and writesPerNodeStage', () => {
  const events = [
    event('kubernetes-client-javascript/2.0.1', 'create', 'nodeops'),
    event('kubernetes-client-javascript/2.0.1', 'patch', 'nodeops/status'),
    event('kubernetes-client-javascript/2.0.1', 'patch', 'nodeops/status', { responseStatus: { code: 409 } }),
    event(`${KCM}/job-controller`, 'update', 'jobs/status'),
    event(`${KCM}/job-controller`, 'create', 'pods'),
    event('kwok/v0.8.0 (linux/amd64)', 'patch', 'pods/status'),
    // Heartbeats: a node's Lease and an API server's identity Lease.
    {
      ...event('kwok/v0.8.0 (linux/amd64)', 'update', 'leases'),
      objectRef: { resource: 'leases', namespace: 'kube-node-lease' },
    },
    {
      ...event('kube-apiserver/v1.37.2', 'update', 'leases'),
      objectRef: { resource: 'leases', namespace: 'kube-system' },
    },
    // Not complete yet: the same request is logged again at ResponseComplete.
    { ...event(`${KCM}/job-controller`, 'update', 'jobs/status'), stage: 'RequestReceived' },
  ];

  it('gives each write to its writer and keeps heartbeats out of the total', () => {
    const writes = clusterWritesOf(events);
    expect(writes.total).toBe(6);
    expect(writes.heartbeats.total).toBe(2);
    expect(writes.byWriter.operator).toEqual({
      total: 3,
      refused: 1,
      byRequest: { 'create nodeops': 1, 'patch nodeops/status': 2 },
    });
    expect(writes.byWriter.jobController.byRequest).toEqual({ 'update jobs/status': 1, 'create pods': 1 });
    expect(writes.byWriter.kubelet.byRequest).toEqual({ 'patch pods/status': 1 });
  });

  it('per node-stage: whole cluster, operator, each writer and request, writers with no write left out', () => {
    const per = writesPerNodeStage(clusterWritesOf(events), 2);
    expect(per).toEqual({
      nodeStages: 2,
      wholeCluster: 3,
      operator: 1.5,
      byWriter: { operator: 1.5, jobController: 1, kubelet: 0.5 },
      byRequest: {
        operator: { 'patch nodeops/status': 1, 'create nodeops': 0.5 },
        jobController: { 'update jobs/status': 0.5, 'create pods': 0.5 },
        kubelet: { 'patch pods/status': 0.5 },
      },
      heartbeatsPerNodeStage: 1,
      refused: 1,
    });
    const sum = Object.values(per.byWriter).reduce((a, b) => a + b, 0);
    expect(sum).toBe(per.wholeCluster);
  });

  it('reads the log from an offset, as the benchmark does (what came before is left out)', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'audit-')), 'audit.log');
    writeFileSync(path, `${JSON.stringify(event('kwok/v0.8.0', 'patch', 'pods/status'))}\n`);
    const from = auditLogEnd(path);
    writeFileSync(path, `${events.map((e) => JSON.stringify(e)).join('\n')}\n`, { flag: 'a' });
    expect(countClusterWrites(path, from).total).toBe(6);
    expect(countWrites(path, from, CLIENT_NODE_USER_AGENT).total).toBe(3);
  });
});
