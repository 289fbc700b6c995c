/**
 * runtimeRequired through the real operator, after upstream's runtime-required, auto-taint-new-nodes
 * and taint-scheduling scenarios: the runtime-required taint leaves each node as soon as every
 * runtimeRequired SCR is complete there (per node); a node with a taint the SCR does not tolerate is
 * blocked, visibly, until the SCR tolerates it; a node that joins untouched is tainted first, then
 * gets the packages and loses the taint.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { V1Node } from '@kubernetes/client-node';
import {
  API_GROUP,
  API_VERSION,
  DEFAULT_RUNTIME_REQUIRED_TAINT,
  KINDS,
  nodeAnnotations,
  SKYHOOK_CONDITIONS,
} from '../../src/api/names.js';
import type { Package } from '../../src/api/skyhook.js';
import { mergePatchCustomObject } from '../../src/kube/client.js';
import { Informer } from '../../src/kube/informer.js';
import { apiListWatch } from '../../src/kube/list-watch.js';
import { silentLogger } from '../../src/kube/logger.js';
import {
  createSkyhook,
  GROUP_LABEL,
  startSkyhookHarness,
  waitForSkyhook,
  type SkyhookHarness,
} from './skyhook-harness.js';

const GROUP = GROUP_LABEL;
const RUNTIME_REQUIRED = { ...DEFAULT_RUNTIME_REQUIRED_TAINT };
const TEST_BLOCK = { key: 'test-block', value: 'true', effect: 'NoSchedule' as const };
const PACKAGE: Package = { version: '1.0.0', image: 'ghcr.io/nvidia/skyhook-packages/shellscript' };

let h: SkyhookHarness;

beforeAll(async () => {
  h = await startSkyhookHarness([
    { name: 'rr-0', labels: { [GROUP]: 'rr' }, taints: [RUNTIME_REQUIRED] },
    { name: 'rr-1', labels: { [GROUP]: 'rr' }, taints: [RUNTIME_REQUIRED, TEST_BLOCK] },
  ]);
}, 120_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

const readNode = (name: string): Promise<V1Node> => h.core.readNode({ name });
const hasTaint = (node: V1Node, key: string): boolean => (node.spec?.taints ?? []).some((t) => t.key === key);

describe('runtime-required nodes, one with an untolerated taint', () => {
  it('untaints the node that completes, blocks the other visibly, and untaints it once the SCR tolerates its taint', async () => {
    await createSkyhook(h, {
      metadata: { name: 'runtime' },
      spec: { runtimeRequired: true, nodeSelectors: { matchLabels: { [GROUP]: 'rr' } }, packages: { pkg: PACKAGE } },
    });
    const partly = await waitForSkyhook(
      h,
      'runtime',
      (s) => s.status?.nodeStatus?.['rr-0'] === 'complete' && s.status.nodeStatus['rr-1'] === 'blocked',
      120_000,
    );
    const taintCondition = partly.status?.conditions?.find((c) => c.type === SKYHOOK_CONDITIONS.taintNotTolerable);
    expect(taintCondition?.status).toBe('True');
    // The untaint is the pass's last step: wait for the watch to show it rather than racing it.
    await waitForNode('rr-0', (node) => !hasTaint(node, RUNTIME_REQUIRED.key));
    const blocked = await readNode('rr-1');
    expect(hasTaint(blocked, RUNTIME_REQUIRED.key)).toBe(true);
    expect(blocked.metadata?.annotations?.[nodeAnnotations.waiting('runtime')]).toBe(
      'TaintNotTolerable: test-block=true:NoSchedule',
    );

    const ref = { group: API_GROUP, version: API_VERSION, plural: KINDS.skyhook.plural, name: 'runtime' };
    await mergePatchCustomObject(h.custom, ref, {
      spec: {
        additionalTolerations: [
          { key: TEST_BLOCK.key, operator: 'Equal', value: TEST_BLOCK.value, effect: TEST_BLOCK.effect },
        ],
      },
    });
    const done = await waitForSkyhook(h, 'runtime', (s) => s.status?.status === 'complete', 120_000);
    expect(
      done.status?.conditions?.find((c) => c.type === SKYHOOK_CONDITIONS.taintNotTolerable)?.status ?? 'False',
    ).toBe('False');
    const untainted = await waitForNode('rr-1', (node) => !hasTaint(node, RUNTIME_REQUIRED.key));
    expect(hasTaint(untainted, TEST_BLOCK.key)).toBe(true);
  }, 180_000);
});

describe('autoTaintNewNodes', () => {
  it('taints a node that joins untouched, applies the packages, then removes the taint', async () => {
    await createSkyhook(h, {
      metadata: { name: 'newcomers' },
      spec: {
        runtimeRequired: true,
        autoTaintNewNodes: true,
        nodeSelectors: { matchLabels: { [GROUP]: 'auto' } },
        packages: { pkg: PACKAGE },
      },
    });
    const seen = await recordTaintSeen('auto-0', RUNTIME_REQUIRED.key);
    await h.cp.addNodes([{ name: 'auto-0', labels: { [GROUP]: 'auto' } }]);
    await waitForSkyhook(
      h,
      'newcomers',
      (s) => s.status?.status === 'complete' && s.status.completeNodes === '1/1',
      120_000,
    );
    const node = await waitForNode('auto-0', (n) => !hasTaint(n, RUNTIME_REQUIRED.key));
    await seen.stop();

    expect(seen.tainted()).toBe(true);
    expect(node.metadata?.annotations?.[nodeAnnotations.autoTaint(RUNTIME_REQUIRED.key)]).toBe('true');
  }, 180_000);
});

/** Resolves with the node once `done` holds for it, as a watch sees it. */
async function waitForNode(name: string, done: (node: V1Node) => boolean, timeoutMs = 60_000): Promise<V1Node> {
  const informer = new Informer<V1Node>(apiListWatch(h.cp.kubeConfig, '/api/v1/nodes'), {
    resource: `wait-${name}`,
    logger: silentLogger(),
  });
  try {
    return await new Promise<V1Node>((resolveWait, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `node ${name} not as expected after ${timeoutMs} ms: ${JSON.stringify(informer.get(name)?.spec)}`,
            ),
          ),
        timeoutMs,
      );
      const check = (node: V1Node): void => {
        if (node.metadata?.name !== name || !done(node)) return;
        clearTimeout(timer);
        resolveWait(node);
      };
      informer.on({ add: check, update: check });
      informer.start();
    });
  } finally {
    await informer.stop();
  }
}

/** Whether the node was ever seen with the taint, over the rest of the test. */
async function recordTaintSeen(name: string, key: string): Promise<{ tainted(): boolean; stop(): Promise<void> }> {
  const informer = new Informer<V1Node>(apiListWatch(h.cp.kubeConfig, '/api/v1/nodes'), {
    resource: `taint-${name}`,
    logger: silentLogger(),
  });
  let tainted = false;
  const check = (node: V1Node): void => {
    if (node.metadata?.name === name && hasTaint(node, key)) tainted = true;
  };
  informer.on({ add: check, update: check });
  informer.start();
  await informer.waitForSync(30_000);
  return { tainted: () => tainted, stop: () => informer.stop() };
}
