/**
 * The health gates' checks (views/health-gates/): node conditions, CEL over the Node (and its
 * compile errors as spec problems naming the field), pods Ready on the node, and Prometheus (a query
 * and the alerts list) against a tiny local HTTP server standing in for Prometheus' API.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { DeploymentPolicy } from '../../../../../src/api/deployment-policy.js';
import { gateKey } from '../../../../../src/api/health-gates.js';
import { nodeAnnotations } from '../../../../../src/api/names.js';
import type { Skyhook } from '../../../../../src/api/skyhook.js';
import { cachedBarrierPod } from '../../../../../src/controllers/cached-objects.js';
import { compileCel } from '../../../../../src/controllers/skyhook/views/health-gates/cel-gate.js';
import {
  evaluateHealthGates,
  gateProblems,
} from '../../../../../src/controllers/skyhook/views/health-gates/evaluate.js';
import {
  checkCel,
  checkNodeConditions,
  checkPods,
} from '../../../../../src/controllers/skyhook/views/health-gates/gate-checks.js';
import { PrometheusGate } from '../../../../../src/controllers/skyhook/views/health-gates/prometheus-gate.js';

const node = (
  conditions: { type: string; status: string; reason?: string }[],
  extra: Partial<V1Node> = {},
): V1Node => ({
  metadata: { name: 'n0', labels: { gpu: 'yes' }, annotations: {} },
  spec: {},
  status: { conditions: conditions.map((c) => ({ ...c })), allocatable: { 'nvidia.com/gpu': '8' } },
  ...extra,
});

const pod = (
  name: string,
  ready: boolean,
  extra: { namespace?: string; node?: string; deleting?: boolean } = {},
): V1Pod => ({
  metadata: {
    name,
    namespace: extra.namespace ?? 'gpu',
    labels: { app: 'validator' },
    ...(extra.deleting ? { deletionTimestamp: new Date('2030-01-01T00:00:00Z') } : {}),
  },
  spec: { nodeName: extra.node ?? 'n0', containers: [] },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});

describe('node conditions', () => {
  it('passes when every condition has its status, Absent meaning no such condition', () => {
    const n = node([
      { type: 'Ready', status: 'True' },
      { type: 'KernelDeadlock', status: 'False' },
    ]);
    expect(
      checkNodeConditions(
        [
          { type: 'Ready', status: 'True' },
          { type: 'GPULost', status: 'Absent' },
        ],
        n,
      ),
    ).toEqual({ passed: true });
    expect(checkNodeConditions([{ type: 'KernelDeadlock', status: 'False' }], n).passed).toBe(true);
  });

  it('says what failed', () => {
    const n = node([{ type: 'Ready', status: 'False', reason: 'KubeletNotReady' }]);
    expect(
      checkNodeConditions(
        [
          { type: 'Ready', status: 'True' },
          { type: 'Validated', status: 'True' },
        ],
        n,
      ),
    ).toEqual({
      passed: false,
      detail: 'condition Ready is False (KubeletNotReady), want True; condition Validated is absent, want True',
    });
    expect(checkNodeConditions([{ type: 'Ready', status: 'Absent' }], n).detail).toBe(
      'condition Ready is False (KubeletNotReady), want Absent',
    );
  });
});

describe('CEL over the Node', () => {
  const compiled = (text: string) => {
    const result = compileCel(text);
    if ('error' in result) throw new Error(result.error);
    return result;
  };

  it('is true, false, or fails with the evaluation error', () => {
    const n = node([{ type: 'Ready', status: 'True' }]);
    expect(checkCel(compiled("node.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')"), n)).toEqual({
      passed: true,
    });
    expect(checkCel(compiled("node.status.allocatable['nvidia.com/gpu'] == '8'"), n).passed).toBe(true);
    expect(checkCel(compiled("node.metadata.labels['gpu'] == 'no'"), n)).toEqual({
      passed: false,
      detail: "CEL expression is false: node.metadata.labels['gpu'] == 'no'",
    });
    expect(checkCel(compiled("node.metadata.labels['missing'] == 'x'"), n)).toEqual({
      passed: false,
      detail: 'CEL expression failed: No such key: missing',
    });
  });

  it('reports an expression that does not compile, or is not a bool, as a problem naming the field', () => {
    expect(compileCel('node.')).toHaveProperty('error');
    expect(compileCel('other.field')).toEqual({ error: 'Unknown variable: other' });
    expect(compileCel('1 + 2')).toEqual({ error: 'the expression is of type int, a gate needs a bool' });
    const policy: DeploymentPolicy = {
      apiVersion: 'skyhook.nvidia.com/v1alpha1',
      kind: 'DeploymentPolicy',
      metadata: { name: 'p' },
      spec: {
        default: { budget: { count: 1 }, strategy: { fixed: {} } },
        healthGates: {
          beforeBatch: [{ name: 'ok', cel: 'true' }],
          beforeUncordon: [
            { name: 'ok', nodeConditions: [{ type: 'Ready', status: 'True' }] },
            { name: 'bad', cel: 'other.field' },
            { name: 'regexp', prometheus: { url: 'http://x', alerts: { ignore: '(' } } },
          ],
        },
      },
    };
    const problems = gateProblems(policy);
    expect(problems[0]).toBe('DeploymentPolicy p spec.healthGates.beforeUncordon[1].cel: Unknown variable: other');
    expect(problems[1]).toMatch(
      /^DeploymentPolicy p spec\.healthGates\.beforeUncordon\[2\]\.prometheus\.alerts\.ignore: /,
    );
    expect(problems).toHaveLength(2);
  });
});

describe('pods Ready on the node', () => {
  const check = { selector: { matchLabels: { app: 'validator' } }, namespace: 'gpu' };

  it('needs at least one matching pod on the node, every one Ready and not being deleted', () => {
    expect(checkPods(check, 'n0', [])).toEqual({
      passed: false,
      detail: 'no pod matching the selector in namespace gpu on the node',
    });
    expect(
      checkPods(check, 'n0', [
        pod('v1', true),
        pod('other', false, { namespace: 'x' }),
        pod('v2', false, { node: 'n1' }),
      ]),
    ).toEqual({ passed: true });
    expect(checkPods(check, 'n0', [pod('v1', true), pod('v2', false), pod('v3', true, { deleting: true })])).toEqual({
      passed: false,
      detail: 'pods not Ready: gpu/v2, gpu/v3',
    });
  });

  it('works on the pods as the operator caches them (the Ready condition is kept)', () => {
    expect(checkPods(check, 'n0', [cachedBarrierPod(pod('v1', true))])).toEqual({ passed: true });
    expect(checkPods(check, 'n0', [cachedBarrierPod(pod('v1', false))]).passed).toBe(false);
  });
});

describe('Prometheus (a local HTTP server as its API)', () => {
  let server: Server;
  let url: string;
  const requests: string[] = [];
  let alerts: { labels: Record<string, string>; state: string }[] = [];
  let samples: unknown[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      requests.push(req.url ?? '');
      const path = new URL(req.url ?? '/', 'http://x');
      res.setHeader('content-type', 'application/json');
      if (path.pathname === '/api/v1/alerts') res.end(JSON.stringify({ status: 'success', data: { alerts } }));
      else if (path.pathname === '/api/v1/query')
        res.end(JSON.stringify({ status: 'success', data: { resultType: 'vector', result: samples } }));
      else {
        res.statusCode = 500;
        res.end('{}');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('a query passes while it returns no sample; `$node` is the node', async () => {
    const gate = new PrometheusGate({ ttlMs: 0 });
    samples = [];
    expect(await gate.check({ url, query: 'DCGM_FI_DEV_XID_ERRORS{Hostname="$node"} > 0' }, 'n0')).toEqual({
      passed: true,
    });
    expect(decodeURIComponent(requests.at(-1)!)).toContain('Hostname="n0"');
    samples = [{ metric: { __name__: 'DCGM_FI_DEV_XID_ERRORS', gpu: '3' }, value: [1, '79'] }];
    expect(await gate.check({ url, query: 'DCGM_FI_DEV_XID_ERRORS > 0' }, 'n0')).toEqual({
      passed: false,
      detail: 'query DCGM_FI_DEV_XID_ERRORS > 0 returned 1 sample(s): DCGM_FI_DEV_XID_ERRORS{gpu="3"}',
    });
  });

  it('alerts: only firing ones count, filtered by match and ignore regexps (as kured)', async () => {
    const gate = new PrometheusGate({ ttlMs: 0 });
    alerts = [
      { labels: { alertname: 'Watchdog' }, state: 'firing' },
      { labels: { alertname: 'GPUDown' }, state: 'pending' },
    ];
    expect(await gate.check({ url, alerts: { ignore: '^Watchdog$' } }, 'n0')).toEqual({ passed: true });
    expect(await gate.check({ url, alerts: {} }, 'n0')).toEqual({ passed: false, detail: 'alerts firing: Watchdog' });
    alerts.push({ labels: { alertname: 'GPUDown' }, state: 'firing' });
    expect(await gate.check({ url, alerts: { match: '^GPU' } }, 'n0')).toEqual({
      passed: false,
      detail: 'alerts firing: GPUDown',
    });
  });

  it('asks once per recheck for every node and Skyhook waiting on the same gate', async () => {
    const gate = new PrometheusGate({ ttlMs: 60_000 });
    alerts = [];
    const before = requests.length;
    await Promise.all([gate.check({ url, alerts: {} }, 'n0'), gate.check({ url, alerts: {} }, 'n1')]);
    expect(requests.length - before).toBe(1);
  });

  it('fails closed, with the reason, when Prometheus cannot answer', async () => {
    const gate = new PrometheusGate({ ttlMs: 0 });
    expect(await gate.check({ url: `${url}/broken`, alerts: {} }, 'n0')).toEqual({
      passed: false,
      detail: `Prometheus answered HTTP 500 for ${url}/broken/api/v1/alerts`,
    });
    const down = await gate.check({ url: 'http://127.0.0.1:1', alerts: {} }, 'n0');
    expect(down.passed).toBe(false);
    expect(down.detail).toMatch(/^Prometheus cannot be asked \(http:\/\/127\.0\.0\.1:1\/api\/v1\/alerts\): /);
  });
});

describe('evaluateHealthGates', () => {
  const scr = (name: string): Skyhook => ({
    apiVersion: 'skyhook.nvidia.com/v1alpha1',
    kind: 'Skyhook',
    metadata: { name },
    spec: { nodeSelectors: { matchLabels: { gpu: 'yes' } }, deploymentPolicy: 'p' },
  });
  const policy: DeploymentPolicy = {
    apiVersion: 'skyhook.nvidia.com/v1alpha1',
    kind: 'DeploymentPolicy',
    metadata: { name: 'p' },
    spec: {
      default: { budget: { count: 1 }, strategy: { fixed: {} } },
      healthGates: { beforeBatch: [{ name: 'ready', nodeConditions: [{ type: 'Ready', status: 'True' }] }] },
    },
  };

  it('checks only nodes that may wait on a gate (in progress, erroring, cordoned by the SCR, or waiting), unless asked for all', async () => {
    const active = node([{ type: 'Ready', status: 'True' }], {
      metadata: { name: 'busy', labels: { gpu: 'yes' }, annotations: { [nodeAnnotations.status('s')]: 'in_progress' } },
    });
    const idle = node([], { metadata: { name: 'idle', labels: { gpu: 'yes' }, annotations: {} } });
    const input = {
      skyhooks: [scr('s')],
      policies: [policy],
      nodes: [active, idle],
      podsOn: () => [],
      prometheus: new PrometheusGate(),
    };
    const results = await evaluateHealthGates({ ...input, scope: 'active' });
    expect(results).toEqual({
      problems: { p: [] },
      results: { p: { busy: { [gateKey('beforeBatch', 'ready')]: { passed: true } } } },
    });
    const all = await evaluateHealthGates({ ...input, scope: 'all' });
    expect(all?.results['p']?.['idle']).toEqual({
      [gateKey('beforeBatch', 'ready')]: { passed: false, detail: 'condition Ready is absent, want True' },
    });
    expect(await evaluateHealthGates({ ...input, policies: [], scope: 'all' })).toBeUndefined();
  });
});
