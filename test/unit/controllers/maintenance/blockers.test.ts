/**
 * Reboot blockers (kured's --blocking-pod-selector and Prometheus alert gate): the pure decision,
 * the alert filter's kured semantics, and the Prometheus query against a tiny local HTTP server.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CoreV1Api } from '@kubernetes/client-node';
import { createServer, type Server } from 'node:http';
import { pino } from 'pino';
import type { AddressInfo } from 'node:net';
import {
  BLOCKER_REASONS,
  blockingPods,
  checkBlockers,
  checkRebootBlockers,
  decideBlockers,
  type BlockerDeps,
  type PodLike,
} from '../../../../src/controllers/maintenance/blockers.js';
import {
  activeAlertNames,
  alertFilterError,
  queryAlerts,
  type AlertSample,
} from '../../../../src/kube/prometheus-alerts.js';

const pod = (name: string, labels: Record<string, string>, phase = 'Running', node = 'n1'): PodLike => ({
  metadata: { name, namespace: 'ns', labels },
  spec: { nodeName: node },
  status: { phase },
});

const alert = (alertname: string, alertstate = 'firing', value = '1'): AlertSample => ({
  metric: { __name__: 'ALERTS', alertname, alertstate },
  value: [1_700_000_000, value],
});

describe('blockingPods', () => {
  const pods = [
    pod('db-0', { app: 'db' }),
    pod('done', { app: 'db' }, 'Succeeded'),
    pod('failed', { app: 'db' }, 'Failed'),
    pod('lost', { app: 'db' }, 'Unknown'),
    pod('pending', { app: 'db' }, 'Pending'),
    pod('web', { app: 'web' }),
    pod('elsewhere', { app: 'db' }, 'Running', 'n2'),
  ];
  it('names running and pending pods on the node matching any selector', () => {
    expect(blockingPods(pods, 'n1', [{ matchLabels: { app: 'db' } }])).toEqual(['ns/db-0', 'ns/pending']);
    expect(
      blockingPods(pods, 'n1', [
        { matchLabels: { app: 'x' } },
        { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] },
      ]),
    ).toEqual(['ns/web']);
  });
  it('no selectors block nothing', () => {
    expect(blockingPods(pods, 'n1', [])).toEqual([]);
  });
});

describe('activeAlertNames (kured semantics)', () => {
  const samples = [alert('NodeDown'), alert('Watchdog'), alert('DiskPending', 'pending'), alert('Zero', 'firing', '0')];
  it('every alert with a non-zero value counts by default, once, sorted', () => {
    expect(activeAlertNames([...samples, alert('NodeDown')])).toEqual(['DiskPending', 'NodeDown', 'Watchdog']);
  });
  it('the regexp is an ignore list by default', () => {
    expect(activeAlertNames(samples, { regexp: 'Watchdog|Disk' })).toEqual(['NodeDown']);
  });
  it('with matchOnly the regexp is an allow list', () => {
    expect(activeAlertNames(samples, { regexp: '^Node', matchOnly: true })).toEqual(['NodeDown']);
  });
  it('firingOnly drops pending alerts', () => {
    expect(activeAlertNames(samples, { firingOnly: true })).toEqual(['NodeDown', 'Watchdog']);
  });
  it('samples without an alertname are not alerts', () => {
    expect(activeAlertNames([{ metric: { __name__: 'ALERTS' }, value: [0, '1'] }])).toEqual([]);
  });
  it('an invalid regexp is reported', () => {
    expect(alertFilterError({ regexp: '(' })).toMatch(/invalid alert filter regexp/);
    expect(alertFilterError({ regexp: 'a|b' })).toBeUndefined();
  });
});

describe('decideBlockers', () => {
  it('nothing found: not blocked', () => {
    expect(decideBlockers({})).toEqual({ blocked: false });
    expect(decideBlockers({ pods: { names: [] }, alerts: { names: [] } })).toEqual({ blocked: false });
  });
  it('pods first, then alerts; errors block', () => {
    expect(decideBlockers({ pods: { names: ['ns/a'] }, alerts: { names: ['X'] } })).toEqual({
      blocked: true,
      reason: BLOCKER_REASONS.blockingPods,
      message: 'blocking pods on the node: ns/a',
    });
    expect(decideBlockers({ pods: { names: [] }, alerts: { names: ['X', 'Y'] } })).toEqual({
      blocked: true,
      reason: BLOCKER_REASONS.alerts,
      message: 'active alerts: X, Y',
    });
    expect(decideBlockers({ pods: { error: 'forbidden' } })).toMatchObject({ reason: 'BlockingPods' });
    expect(decideBlockers({ alerts: { error: 'refused' } })).toMatchObject({ reason: 'ActiveAlerts' });
  });
  it('long lists are shortened', () => {
    const names = Array.from({ length: 8 }, (_, i) => `ns/p${i}`);
    const decision = decideBlockers({ pods: { names } });
    expect(decision.blocked && decision.message).toBe(
      'blocking pods on the node: ns/p0, ns/p1, ns/p2, ns/p3, ns/p4 and 3 more',
    );
  });
});

describe('checkBlockers against a local Prometheus', () => {
  let server: Server;
  let url = '';
  let answer: { status: number; body: string } = { status: 200, body: '' };
  const queries: string[] = [];
  const vector = (samples: AlertSample[]): string =>
    JSON.stringify({ status: 'success', data: { resultType: 'vector', result: samples } });

  beforeAll(async () => {
    server = createServer((req, res) => {
      queries.push(req.url ?? '');
      res.writeHead(answer.status, { 'Content-Type': 'application/json' });
      res.end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/prom`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  let podLists = 0;
  const deps = (pods: PodLike[]): BlockerDeps => ({
    podsOnNode: async () => {
      podLists += 1;
      return pods;
    },
    alerts: (u) => queryAlerts(u, 2000),
  });

  it('queries ALERTS under the base path and holds on a firing alert that counts', async () => {
    answer = { status: 200, body: vector([alert('Watchdog'), alert('NodeDown')]) };
    const spec = { alertGate: { prometheusUrl: url, alertFilterRegexp: 'Watchdog' } };
    expect(await checkBlockers(deps([]), spec, 'n1')).toEqual({
      blocked: true,
      reason: 'ActiveAlerts',
      message: 'active alerts: NodeDown',
    });
    expect(queries.at(-1)).toBe('/prom/api/v1/query?query=ALERTS');
    answer = { status: 200, body: vector([alert('Watchdog')]) };
    expect(await checkBlockers(deps([]), spec, 'n1')).toEqual({ blocked: false });
  });

  it('an error answer, a non-vector or no server at all blocks', async () => {
    const spec = { alertGate: { prometheusUrl: url } };
    answer = { status: 503, body: JSON.stringify({ status: 'error', error: 'overloaded' }) };
    expect(await checkBlockers(deps([]), spec, 'n1')).toMatchObject({
      blocked: true,
      reason: 'ActiveAlerts',
      message: expect.stringMatching(/could not query alerts: .*503.*overloaded/),
    });
    answer = { status: 200, body: JSON.stringify({ status: 'success', data: { resultType: 'matrix', result: [] } }) };
    expect(await checkBlockers(deps([]), spec, 'n1')).toMatchObject({ message: /not a vector/ });
    const closed = { alertGate: { prometheusUrl: 'http://127.0.0.1:1' } };
    expect(await checkBlockers(deps([]), closed, 'n1')).toMatchObject({ blocked: true, reason: 'ActiveAlerts' });
  });

  it('blocking pods hold before alerts are looked at in the message; no spec asks nothing', async () => {
    answer = { status: 200, body: vector([alert('NodeDown')]) };
    const spec = { blockingPodSelectors: [{ matchLabels: { app: 'db' } }], alertGate: { prometheusUrl: url } };
    expect(await checkBlockers(deps([pod('db-0', { app: 'db' })]), spec, 'n1')).toMatchObject({
      reason: 'BlockingPods',
      message: 'blocking pods on the node: ns/db-0',
    });
    const before = { lists: podLists, queries: queries.length };
    expect(await checkBlockers(deps([pod('db-0', { app: 'db' })]), {}, 'n1')).toEqual({ blocked: false });
    expect({ lists: podLists, queries: queries.length }).toEqual(before);
  });

  it('a pod list error blocks', async () => {
    const failing: BlockerDeps = {
      podsOnNode: async () => {
        throw new Error('pods is forbidden');
      },
      alerts: async () => [],
    };
    expect(await checkBlockers(failing, { blockingPodSelectors: [{}] }, 'n1')).toEqual({
      blocked: true,
      reason: 'BlockingPods',
      message: "could not list the node's pods: pods is forbidden",
    });
  });
});

describe('checkRebootBlockers (the controller contract)', () => {
  it("lists the node's unfinished pods by field selector and matches the policy's selectors", async () => {
    const calls: unknown[] = [];
    const core = {
      listPodForAllNamespaces: async (request: unknown) => {
        calls.push(request);
        return { items: [pod('db-0', { app: 'db' }), pod('web', { app: 'web' })] };
      },
    } as unknown as CoreV1Api;
    const logger = pino({ level: 'silent' });
    const spec = { blockingPodSelectors: [{ matchLabels: { app: 'db' } }] };
    expect(await checkRebootBlockers({ core, logger }, { name: 'nightly', spec }, 'n1')).toEqual({
      blocked: true,
      reason: 'BlockingPods',
      message: 'blocking pods on the node: ns/db-0',
    });
    expect(calls).toEqual([
      { fieldSelector: 'spec.nodeName=n1,status.phase!=Succeeded,status.phase!=Failed,status.phase!=Unknown' },
    ]);
    expect(await checkRebootBlockers({ core, logger }, { name: 'nightly', spec: {} }, 'n1')).toEqual({
      blocked: false,
    });
    expect(calls).toHaveLength(1);
  });
});
