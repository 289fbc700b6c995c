/**
 * Bad input, clear errors: every row of bad-input-table.ts against the real operator on one control
 * plane. All inputs go in at once (each on its own nodes, so they run in parallel); each test waits
 * for its rows' condition or Event and checks that nothing was lost: other nodes and SCRs finish,
 * what the user wrote is still there, and bad node state is left as it was.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CoreV1Event } from '@kubernetes/client-node';
import {
  API_GROUP,
  API_VERSION,
  GROUP_VERSION,
  IGNORE_NODE_LABEL,
  KINDS,
  nodeAnnotations,
  nodeLabels,
  SKYHOOK_ANNOTATIONS,
} from '../../src/api/names.js';
import type { NodeOp } from '../../src/api/nodeop.js';
import type { Package, Skyhook } from '../../src/api/skyhook.js';
import { waitForList } from '../../src/kube/wait.js';
import { BAD_INPUT_ROWS, badInputRow, badInputTable } from './bad-input-table.js';
import {
  createDeploymentPolicy,
  createSkyhook,
  GROUP_LABEL,
  groupNodes,
  NAMESPACE,
  startSkyhookHarness,
  waitForSkyhook,
  type SkyhookHarness,
} from './skyhook-harness.js';

const PKG: Package = { version: '1.0.0', image: 'ghcr.io/nvidia/skyhook-packages/shellscript' };
const STATE = (fields: string): string => `{"pkg|1.0.0":{"name":"pkg","version":"1.0.0","image":"x",${fields}}}`;
/** nodeState_ns values, one per node ns-<i>; node ns-13 has a good (empty) state. */
const MALFORMED: [string, string][] = [
  ['ns-syntax', '{not json'],
  ['ns-empty', ''],
  ['ns-truncated', '{"pkg|1.0.0":{"name":"pkg"'],
  ['ns-trailing-comma', '{"pkg|1.0.0":{"name":"pkg",}}'],
  ['ns-array', '[]'],
  ['ns-string', '"complete"'],
  ['ns-number', '42'],
  ['ns-entry-string', '{"pkg|1.0.0":"complete"}'],
  ['ns-stage', STATE('"stage":"install","state":"complete"')],
  ['ns-state', STATE('"stage":"apply","state":"done"')],
  ['ns-restarts-negative', STATE('"stage":"apply","state":"erroring","restarts":-1')],
  ['ns-restarts-string', STATE('"stage":"apply","state":"erroring","restarts":"3"')],
  ['ns-image-array', '{"pkg|1.0.0":{"name":"pkg","version":"1.0.0","image":["x"],"stage":"apply","state":"complete"}}'],
];
const NS_NODES = groupNodes('ns', MALFORMED.length + 1);
const REC_NODES = groupNodes('rec', 6, (i) =>
  i === 1
    ? { [nodeLabels.status('rec')]: 'not-a-status' }
    : i === 3
      ? { [IGNORE_NODE_LABEL]: 'yes' }
      : i === 4
        ? { [IGNORE_NODE_LABEL]: '' }
        : {},
);
const SINGLE = [
  'pause',
  'disable',
  'spec',
  'b-pct0',
  'b-count0',
  'b-policy',
  'pol-late',
  'conflict',
  'dup',
  'agentws',
  'pkgimg',
  'agentimg',
  'tiny',
];
const NODEOP_NODES = groupNodes('nodeop', 2);

let h: SkyhookHarness;
const checked = new Set<string>();
const printed: string[] = [];

function expectRow(id: string, reason: string | undefined, message: string | undefined): void {
  const row = badInputRow(id);
  const [type, wanted] = row.reason.split('/');
  if (wanted === undefined) expect(reason).toBe(row.reason);
  else expect([`${type}/${wanted}`, `${type}/MultipleWarnings`]).toContain(reason);
  let at = 0;
  for (const part of row.message.split('…').filter((p) => p !== '')) {
    const found = (message ?? '').indexOf(part, at);
    if (found < 0) throw new Error(`row ${id}: ${JSON.stringify(part)} not in ${JSON.stringify(message)}`);
    at = found + part.length;
  }
  checked.add(id);
  printed.push(`${id} → ${row.signal} ${reason ?? ''} → ${message ?? ''}`);
}

const scrCondition = async (name: string, type: string, id: string): Promise<Skyhook> => {
  const part = badInputRow(id).message.split('…')[0]!;
  const scr = await waitForSkyhook(
    h,
    name,
    (s) => s.status?.conditions?.some((c) => c.type === type && c.message.includes(part)) === true,
  );
  const condition = scr.status!.conditions!.find((c) => c.type === type)!;
  expectRow(id, `${type}/${condition.reason}`, condition.message);
  return scr;
};

/** The row's Event; with `anyMessage`, the first Event of that reason (so a wrong message fails with the message shown). */
const event = async (kind: string, name: string, id: string, anyMessage = false, timeoutMs = 90_000): Promise<void> => {
  const { reason } = badInputRow(id);
  const part = anyMessage ? '' : badInputRow(id).message.split('…').at(-1)!;
  const match = (e: CoreV1Event): boolean =>
    e.involvedObject.kind === kind &&
    e.involvedObject.name === name &&
    e.reason === reason &&
    (e.message ?? '').includes(part);
  const all = await waitForList<CoreV1Event>(
    h.cp.kubeConfig,
    '/api/v1/events',
    (events) => events.some(match),
    timeoutMs,
    `${reason} Event on ${kind} ${name}`,
  );
  const found = all.find(match)!;
  expectRow(id, found.reason, found.message);
};

const annotationsOf = async (node: string): Promise<Record<string, string>> =>
  (await h.core.readNode({ name: node })).metadata?.annotations ?? {};
const scr = (
  name: string,
  group: string,
  spec: Partial<Skyhook['spec']>,
  annotations: Record<string, string> = {},
): Promise<void> =>
  createSkyhook(h, {
    metadata: { name, annotations },
    spec: { nodeSelectors: { matchLabels: { [GROUP_LABEL]: group } }, packages: { pkg: PKG }, ...spec },
  });
const nodeOp = (name: string, spec: Record<string, unknown>): Promise<unknown> =>
  h.custom.createNamespacedCustomObject({
    group: API_GROUP,
    version: API_VERSION,
    plural: KINDS.nodeOp.plural,
    namespace: NAMESPACE,
    body: {
      apiVersion: GROUP_VERSION,
      kind: KINDS.nodeOp.kind,
      metadata: { name },
      spec: { command: ['true'], ...spec },
    },
  });

beforeAll(async () => {
  const nsNodes = NS_NODES.map((node, i) =>
    i < MALFORMED.length ? { ...node, annotations: { [nodeAnnotations.nodeState('ns')]: MALFORMED[i]![1] } } : node,
  );
  const recNodes = REC_NODES.map((node, i) => ({
    ...node,
    annotations:
      i === 0
        ? { [nodeAnnotations.status('rec')]: 'garbage' }
        : i === 2
          ? { [nodeAnnotations.recordedOps('rec')]: '["all","done"]' }
          : i === 5
            ? { [nodeAnnotations.cordon('ghost')]: 'true' }
            : {},
  }));
  h = await startSkyhookHarness([
    ...nsNodes,
    ...recNodes,
    ...groupNodes('b-count', 2),
    ...groupNodes('pol-del', 3),
    ...SINGLE.flatMap((g) => groupNodes(g, 1)),
    ...NODEOP_NODES,
  ]);
  const slow: Package = { ...PKG, env: [{ name: 'SKYHOOK_SIM_DURATION', value: '3s' }] };
  await createDeploymentPolicy(h, 'big-count', { default: { budget: { count: 50 }, strategy: { fixed: {} } } });
  await createDeploymentPolicy(h, 'doomed', { default: { budget: { count: 1 }, strategy: { fixed: {} } } });
  await Promise.all([
    scr('ns', 'ns', {}),
    scr('rec', 'rec', {}),
    scr('pause-yes', 'pause', {}, { [SKYHOOK_ANNOTATIONS.pause]: 'yes' }),
    scr('disable-upper', 'disable', {}, { [SKYHOOK_ANNOTATIONS.disable]: 'TRUE' }),
    scr('spec-hugecm', 'spec', { packages: { big: { ...PKG, configMap: { 'blob.txt': 'x'.repeat(1_153_434) } } } }),
    scr('spec-cmkey', 'spec', { packages: { pkg: { ...PKG, configMap: { 'conf/app.sh': 'echo' } } } }),
    scr('spec-env', 'spec', { packages: { pkg: { ...PKG, env: [{ name: 'A=B', value: '1' }] } } }),
    scr('spec-selkey', 'spec', { nodeSelectors: { matchLabels: { 'bad key': 'x' } } }),
    scr('spec-selvalue', 'spec', { nodeSelectors: { matchLabels: { [GROUP_LABEL]: 'spec', pool: 'a b' } } }),
    scr('spec-podlabels', 'spec', {
      podNonInterruptLabels: { matchExpressions: [{ key: 'app name', operator: 'Exists' }] },
    }),
    scr('spec-cycle', 'spec', {
      packages: {
        first: { ...PKG, dependsOn: { second: '1.0.0' } },
        second: { ...PKG, dependsOn: { first: '1.0.0' } },
      },
    }),
    scr('spec-glob', 'spec', {
      packages: { pkg: { ...PKG, configMap: { 'a.sh': 'x' }, configInterrupts: { '*.conf': { type: 'reboot' } } } },
    }),
    scr('tiny', 'tiny', {
      packages: { sleepy: { ...PKG, stageTimeout: '500us', env: [{ name: 'SKYHOOK_SIM_DURATION', value: '20s' }] } },
    }),
    scr('b-count', 'b-count', { interruptionBudget: { count: 1000 } }),
    scr('b-pct0', 'b-pct0', { interruptionBudget: { percent: 0 } }),
    scr('b-count0', 'b-count0', { interruptionBudget: { count: 0 } }),
    scr('b-policy', 'b-policy', { deploymentPolicy: 'big-count' }),
    scr('pol-late', 'pol-late', { deploymentPolicy: 'late-policy' }),
    scr('pol-del', 'pol-del', { deploymentPolicy: 'doomed', packages: { pkg: slow } }),
    scr('nobody', 'nobody', {}),
    scr('conflict-a', 'conflict', { packages: { tool: PKG } }),
    scr('conflict-b', 'conflict', { packages: { tool: { ...PKG, version: '2.0.0' } } }),
    scr('dup-a', 'dup', { packages: { tool: PKG } }),
    scr('dup-b', 'dup', { packages: { tool: PKG } }),
    scr('agentws', 'agentws', { packages: { pkg: { ...PKG, agentImageOverride: 'ghcr.io/x/agent:1.0 ' } } }),
    scr('pkgimg', 'pkgimg', { packages: { pkg: { ...PKG, image: 'registry.invalid/pkg' } } }),
    scr('agentimg', 'agentimg', { packages: { pkg: { ...PKG, agentImageOverride: 'registry.invalid/agent:1' } } }),
    nodeOp('op-env', { targetNodes: ['nodeop-0'], env: [{ name: 'A=B', value: '1' }] }),
    nodeOp('op-img', { targetNodes: ['nodeop-1'], image: 'registry.invalid/tool:1' }),
  ]);
}, 180_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

describe('malformed nodeState_: the node is held, told why on the node, the SCR names the nodes and the fix', () => {
  it('reports each shape, leaves each value as it was, and finishes the good node', async () => {
    await scrCondition('ns', 'NodeStateMalformed', 'ns-condition');
    for (const [id, value] of MALFORMED) {
      const node = `ns-${MALFORMED.findIndex(([other]) => other === id)}`;
      await event('Node', node, id);
      const annotations = await annotationsOf(node);
      expect(annotations[nodeAnnotations.nodeState('ns')]).toBe(value);
      expect(annotations[nodeAnnotations.waiting('ns')]).toContain('NodeStateMalformed: ');
    }
    const done = await waitForSkyhook(h, 'ns', (s) => s.status?.nodeStatus?.[`ns-${MALFORMED.length}`] === 'complete');
    expect(done.status?.status).toBe('blocked');
  });
});

describe('node records and labels the operator reads', () => {
  it('rewrites garbage in its own records with an Event, warns about garbage it reads, and completes every node', async () => {
    await event('Node', 'rec-0', 'status-annotation');
    await event('Node', 'rec-1', 'status-label');
    await event('Node', 'rec-2', 'recorded-ops');
    for (const id of ['ignore-yes', 'ignore-empty', 'stale-cordon']) await scrCondition('rec', 'InputWarning', id);
    await waitForSkyhook(h, 'rec', (s) => s.status?.status === 'complete');
    expect((await annotationsOf('rec-5'))[nodeAnnotations.cordon('ghost')]).toBe('true');
  });

  it('warns about pause/disable annotations that are neither "true" nor "false", and runs the SCRs as upstream does', async () => {
    await scrCondition('pause-yes', 'InputWarning', 'pause-yes');
    await scrCondition('disable-upper', 'InputWarning', 'disable-upper');
    await Promise.all(
      ['pause-yes', 'disable-upper'].map((name) => waitForSkyhook(h, name, (s) => s.status?.status === 'complete')),
    );
  });
});

describe('specs the API server accepts but Kubernetes would refuse to run: InvalidSpec, nothing starts, the spec is kept', () => {
  it.each([
    ['spec-hugecm', 'huge-configmap'],
    ['spec-cmkey', 'configmap-key'],
    ['spec-env', 'env-name'],
    ['spec-selkey', 'selector-key'],
    ['spec-selvalue', 'selector-value'],
    ['spec-podlabels', 'pod-labels-key'],
    ['spec-cycle', 'depends-cycle'],
    ['spec-glob', 'glob-unmatched'],
    ['agentws', 'agent-image-space'],
  ])('%s', async (name, id) => {
    const found = await scrCondition(name, 'InvalidSpec', id);
    expect(found.status?.status).toBe('blocked');
    expect(Object.values(found.status?.nodeStatus ?? {}).every((status) => status === 'blocked')).toBe(true);
    if (name === 'spec-hugecm') expect(found.spec.packages?.['big']?.configMap?.['blob.txt']?.length).toBe(1_153_434);
  });

  it('reads stageTimeout in every unit the CRD accepts (500us was ignored): the stage times out', async () => {
    await event('Skyhook', 'tiny', 'stage-timeout-us');
  });
});

describe('budgets', () => {
  it.each([
    ['b-count', 'budget-count-above'],
    ['b-pct0', 'budget-percent-zero'],
    ['b-count0', 'budget-count-zero'],
    ['b-policy', 'policy-count-above'],
  ])('%s warns and completes', async (name, id) => {
    await scrCondition(name, 'InputWarning', id);
    await waitForSkyhook(h, name, (s) => s.status?.status === 'complete');
  });
});

describe('DeploymentPolicies missing or deleted while referenced', () => {
  it('blocks an SCR naming a missing policy, and recovers when it is created', async () => {
    await scrCondition('pol-late', 'DeploymentPolicyNotFound', 'policy-missing');
    await createDeploymentPolicy(h, 'late-policy', { default: { budget: { count: 1 }, strategy: { fixed: {} } } });
    const done = await waitForSkyhook(h, 'pol-late', (s) => s.status?.status === 'complete');
    expect(done.status?.conditions?.some((c) => c.type === 'DeploymentPolicyNotFound')).toBe(false);
  });

  it('holds the rollout when the policy is deleted mid-way, keeps what was done, and resumes when it is recreated', async () => {
    await waitForSkyhook(h, 'pol-del', (s) => Object.values(s.status?.nodeStatus ?? {}).includes('complete'));
    await h.custom.deleteClusterCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      plural: KINDS.deploymentPolicy.plural,
      name: 'doomed',
    });
    const held = await waitForSkyhook(h, 'pol-del', (s) => s.status?.status === 'blocked');
    const completeNode = Object.entries(held.status?.nodeStatus ?? {}).find(([, status]) => status === 'complete')?.[0];
    const waitingNode = ['pol-del-0', 'pol-del-1', 'pol-del-2'].find(
      (node) => held.status?.nodeStatus?.[node] !== 'complete',
    )!;
    await event('Node', waitingNode, 'policy-deleted');
    expect(completeNode).toBeDefined();
    expect((await annotationsOf(completeNode!))[nodeAnnotations.nodeState('pol-del')]).toContain('"state":"complete"');
    await createDeploymentPolicy(h, 'doomed', { default: { budget: { count: 1 }, strategy: { fixed: {} } } });
    await waitForSkyhook(h, 'pol-del', (s) => s.status?.status === 'complete', 120_000);
  }, 180_000);
});

describe('selectors, conflicts and images', () => {
  it('warns when nodeSelectors match no node', async () => {
    await scrCondition('nobody', 'InputWarning', 'selector-nothing');
  });

  it('reports a package two SCRs install on one node, on both, and both still complete', async () => {
    await scrCondition('conflict-a', 'InputWarning', 'conflict-version');
    await scrCondition('dup-b', 'InputWarning', 'conflict-same');
    await Promise.all(
      ['conflict-a', 'conflict-b', 'dup-a', 'dup-b'].map((name) =>
        waitForSkyhook(h, name, (s) => s.status?.status === 'complete'),
      ),
    );
  });

  it('fails the stage of a package whose image or agent image cannot be pulled, with the pull error and the fix', async () => {
    await Promise.all([event('Skyhook', 'pkgimg', 'package-image'), event('Skyhook', 'agentimg', 'agent-image')]);
  });

  it('fails a NodeOp node whose Job is refused or whose image cannot be pulled', async () => {
    for (const [name, node, id] of [
      ['op-env', 'nodeop-0', 'nodeop-env'],
      ['op-img', 'nodeop-1', 'nodeop-image'],
    ] as const) {
      const ops = await waitForList<NodeOp>(
        h.cp.kubeConfig,
        `/apis/${API_GROUP}/${API_VERSION}/namespaces/${NAMESPACE}/nodeops`,
        (all) => all.some((op) => op.metadata.name === name && op.status?.nodeStatuses?.[node]?.phase === 'Failed'),
        90_000,
        `NodeOp ${name} failed`,
      );
      const status = ops.find((op) => op.metadata.name === name)!.status!.nodeStatuses![node]!;
      expectRow(id, status.phase, status.message);
    }
  });
});

describe('the table', () => {
  it('has at least 40 rows, every one checked above', () => {
    console.log(`${badInputTable()}\n\nas seen:\n${printed.join('\n')}`);
    expect(BAD_INPUT_ROWS.length).toBeGreaterThanOrEqual(40);
    expect(BAD_INPUT_ROWS.map((row) => row.id).filter((id) => !checked.has(id))).toEqual([]);
  });
});
