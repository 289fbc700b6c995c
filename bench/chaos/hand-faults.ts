/**
 * What an administrator's hands do to a rollout, each with kubectl on a different node, mid-stage
 * (the stage's Job seen and not finished): delete the stage Job, the stage NodeOp, the reboot pod;
 * uncordon a node the operator holds; delete a node; corrupt a node's nodeState annotation.
 * A deleted Job or NodeOp destroys the stage that was running: that stage (and only it) may start
 * once more, with a new NodeOp and Job (verdict.ts). The deleted node must be dropped from the rollout; the rest completes.
 */
import { nodeAnnotations, NODEOP_NAMES, CHILD_LABELS } from '../../src/api/names.js';
import { NAMESPACE, waitForSkyhook, type StageJob } from '../../test/e2e/skyhook-cluster.js';
import { SKYHOOK, until, type ChaosCluster } from './chaos-cluster.js';
import type { NodeSnapshot } from './cluster-record.js';
import type { ScenarioRun } from './run-scenario.js';
import { stageKey, type Fault } from './verdict.js';

/** Written over a node's state: not JSON, as a careless edit or a truncated write leaves it. */
export const CORRUPT_STATE = '{"pkg|1.0.0": {"state": "in_prog';
/** A stage Job counts as running once its pod had time to start. */
const STARTED_MS = 300;
const PICK_TIMEOUT_MS = 120_000;

type HandFault = (c: ChaosCluster, job: StageJob) => Promise<Omit<Fault, 'kind' | 'node' | 'at'>>;

async function kubectl(c: ChaosCluster, args: string[]): Promise<string> {
  const result = await c.cp.kubectl(args);
  if (result.code !== 0 || /No resources found/.test(result.stdout + result.stderr))
    throw new Error(`kubectl ${args.join(' ')}: ${result.stderr || result.stdout}`);
  return result.stdout;
}

const selector = (job: StageJob): string =>
  `${CHILD_LABELS.name}=${SKYHOOK},${CHILD_LABELS.node}=${job.node},${CHILD_LABELS.stage}=${job.stage}`;
/**
 * Waits until the watch has seen the fault on the node. It looks through the whole recording, not
 * only the latest state: the operator may undo a fault (re-cordon, restore the node state) within
 * milliseconds, before a poll of the latest state could see it.
 */
const seenNode = (c: ChaosCluster, node: string, holds: (s: NodeSnapshot) => boolean): Promise<void> => {
  const from = c.record.history.length;
  return until(
    `the watch to see the fault on ${node}`,
    () => c.record.history.slice(from).some((s) => s.node === node && holds(s)),
    30_000,
  );
};

const FAULTS: { kind: string; stage: string; inject: HandFault }[] = [
  {
    kind: 'delete-job',
    stage: 'apply',
    inject: async (c, job) => {
      await kubectl(c, ['delete', 'job', '-n', NAMESPACE, job.name, '--wait=false']);
      // The NodeOp fails its node (its Job is gone), and the stage is retried as a failed one is: a new NodeOp and Job.
      return { endedAt: Date.now(), interrupted: stageKey(job), restarts: ['NodeOp', 'Job'] };
    },
  },
  {
    kind: 'delete-nodeop',
    stage: 'config',
    inject: async (c, job) => {
      await kubectl(c, ['delete', 'nodeops', '-n', NAMESPACE, '-l', selector(job), '--wait=false']);
      return { endedAt: Date.now(), interrupted: stageKey(job), restarts: ['NodeOp', 'Job'] };
    },
  },
  {
    kind: 'delete-reboot-pod',
    stage: 'interrupt',
    inject: async (c, job) => {
      await kubectl(c, [
        'delete',
        'pods',
        '-n',
        NAMESPACE,
        '-l',
        `${NODEOP_NAMES.rebootLabel}=true`,
        '--field-selector',
        `spec.nodeName=${job.node}`,
        '--wait=false',
      ]);
      return { endedAt: Date.now() };
    },
  },
  {
    kind: 'uncordon',
    stage: 'config',
    inject: async (c, job) => {
      const seen = seenNode(c, job.node, (s) => !s.unschedulable);
      await kubectl(c, ['uncordon', job.node]);
      await seen;
      return { endedAt: Date.now() };
    },
  },
  {
    kind: 'corrupt-node-state',
    stage: 'config',
    inject: async (c, job) => {
      const seen = seenNode(c, job.node, (s) => s.nodeState === CORRUPT_STATE);
      await kubectl(c, [
        'annotate',
        'node',
        job.node,
        '--overwrite',
        `${nodeAnnotations.nodeState(SKYHOOK)}=${CORRUPT_STATE}`,
      ]);
      await seen;
      return { endedAt: Date.now() };
    },
  },
  {
    kind: 'delete-node',
    stage: 'apply',
    inject: async (c, job) => {
      const seen = seenNode(c, job.node, (s) => s.deleted);
      await kubectl(c, ['delete', 'node', job.node, '--wait=false']);
      await seen;
      const endedAt = Date.now();
      // Recovered once the Skyhook no longer counts the node.
      const dropped = await waitForSkyhook(
        { cp: c.cp },
        SKYHOOK,
        (scr) => (scr.status?.completeNodes ?? '').endsWith(`/${c.size.nodes - 1}`),
        60_000,
      ).then(
        () => Date.now(),
        () => undefined,
      );
      return { endedAt, ...(dropped ? { recoveredAt: dropped } : {}) };
    },
  },
];

export async function handFaults(c: ChaosCluster): Promise<ScenarioRun> {
  await c.startOperator();
  await c.startRollout();
  const used = new Set<string>();
  const faults: Fault[] = [];
  let deletedNode: string | undefined;
  for (const [i, fault] of FAULTS.entries()) {
    await until(`${(i + 1) * 10}% of the rollout`, () => c.progress() >= (i + 1) * 0.1, c.size.timeoutMs);
    let job: StageJob | undefined;
    await until(
      `a running ${fault.stage} Job for ${fault.kind}`,
      () => {
        job = [...c.record.jobs.jobs.values()].find(
          (j) =>
            j.skyhook === SKYHOOK &&
            j.stage === fault.stage &&
            !j.succeeded &&
            !j.failed &&
            !used.has(j.node) &&
            Date.now() - j.seenAt > STARTED_MS,
        );
        return job !== undefined;
      },
      PICK_TIMEOUT_MS,
    );
    const picked = job!;
    used.add(picked.node);
    const at = Date.now();
    const result = await fault.inject(c, picked);
    // A stage that finished before the deletion landed was not destroyed: it must not run again.
    const finishedFirst =
      c.record.jobs.jobs.get(picked.uid)?.succeeded === true &&
      (c.record.jobs.jobs.get(picked.uid)?.doneAt ?? Infinity) <= at;
    const { interrupted, restarts, ...rest } = result;
    faults.push({
      kind: fault.kind,
      node: picked.node,
      at,
      ...rest,
      ...(interrupted && !finishedFirst ? { interrupted, restarts } : {}),
    });
    if (fault.kind === 'delete-node') deletedNode = picked.node;
  }
  const expectedNodes = Array.from({ length: c.size.nodes }, (_, i) => `node-${i}`).filter((n) => n !== deletedNode);
  return {
    faults,
    planned: FAULTS.length,
    expectedNodes,
    notes: { faultNodes: Object.fromEntries(faults.map((f) => [f.kind, f.node])) },
  };
}
