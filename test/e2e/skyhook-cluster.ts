/**
 * The Skyhook e2e helpers that need no operator code, so the benchmarks (plain Node type stripping,
 * which cannot load the controllers' parameter properties) share them with the tests: the CRDs and
 * the operator namespace on a control plane, waits on SCR status with watches, and recorders of
 * stage Jobs and of nodes in progress for a whole run, and the rollout batches recorded Jobs show.
 */
import { CoreV1Api, type V1Job, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { fileURLToPath } from 'node:url';
import { API_GROUP, API_VERSION, CHILD_LABELS, nodeAnnotations } from '../../src/api/names.js';
import { OPERATOR_NAMESPACE } from '../../src/api/operator-rbac.js';
import type { Skyhook } from '../../src/api/skyhook.js';
import { Informer } from '../../src/kube/informer.js';
import { apiListWatch } from '../../src/kube/list-watch.js';
import { silentLogger } from '../../src/kube/logger.js';
import { waitForList } from '../../src/kube/wait.js';
import type { ControlPlane } from '../../src/sandbox/control-plane.js';
import { waitCrdsEstablished } from '../../src/sandbox/crds-established.js';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const NAMESPACE = OPERATOR_NAMESPACE;
export const SKYHOOKS_PATH = `/apis/${API_GROUP}/${API_VERSION}/skyhooks`;

/** Anything with a control plane: a harness, or a bare control plane wrapped as `{ cp }`. */
export interface ClusterHandle {
  cp: ControlPlane;
}

/** What the operator needs before it starts: our CRDs, established, and its namespace. */
export async function installOperatorPrerequisites(cp: ControlPlane): Promise<void> {
  const applied = await cp.kubectl(['apply', '--server-side', '-k', `${REPO_ROOT}config/crd/`]);
  if (applied.code !== 0) throw new Error(applied.stderr);
  await waitCrdsEstablished(cp, [
    'crd/nodeops.skyhook.nvidia.com',
    'crd/skyhooks.skyhook.nvidia.com',
    'crd/deploymentpolicies.skyhook.nvidia.com',
    'crd/disruptionbudgets.skyhook.nvidia.com',
    'crd/packagetrustpolicies.skyhook.nvidia.com',
  ]);
  await cp.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NAMESPACE } } });
}

export async function kubectlOk(h: ClusterHandle, args: string[], input?: string): Promise<string> {
  const result = await h.cp.kubectl(args, input === undefined ? undefined : { input });
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

export async function waitForSkyhook(
  h: ClusterHandle,
  name: string,
  done: (scr: Skyhook) => boolean,
  timeoutMs = 90_000,
): Promise<Skyhook> {
  const found = await waitForList<Skyhook>(
    h.cp.kubeConfig,
    SKYHOOKS_PATH,
    (all) => all.some((scr) => scr.metadata.name === name && done(scr)),
    timeoutMs,
    `Skyhook ${name}`,
  );
  return found.find((scr) => scr.metadata.name === name)!;
}

export async function waitForSkyhookGone(h: ClusterHandle, name: string, timeoutMs = 60_000): Promise<void> {
  await waitForList<Skyhook>(
    h.cp.kubeConfig,
    SKYHOOKS_PATH,
    (all) => !all.some((scr) => scr.metadata.name === name),
    timeoutMs,
    `Skyhook ${name} gone`,
  );
}

export interface StageJob {
  name: string;
  uid: string;
  node: string;
  skyhook: string;
  package: string;
  stage: string;
  failed: boolean;
  succeeded: boolean;
  /** Date.now() when the Job was first seen, and when it was first seen finished. */
  seenAt: number;
  doneAt?: number | undefined;
  /**
   * The same two moments as resourceVersions (etcd revisions, one order for the whole cluster): the
   * Job's first event seen, and the earliest event seen showing it done (its pod Succeeded, or its
   * Complete/Failed condition). Unlike the arrival times they do not depend on how late each watch is.
   */
  seenRv?: string | undefined;
  doneRv?: string | undefined;
}

/** The earlier of two resourceVersions (numeric, as etcd's are), either possibly absent. */
function earlierRv(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  return Number(a) <= Number(b) ? a : b;
}

/** Every stage Job of the operator namespace seen during a test, in the order they appeared (deleted ones included). */
export interface JobRecorder {
  jobs: Map<string, StageJob>;
  /** Stages per node, in the order their Jobs appeared. */
  stagesByNode(skyhook: string, pkg?: string): Record<string, string[]>;
  /** Resolves once this many Jobs have been seen. */
  whenSeen(count: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A stage is done when its pod succeeded: the operator moves on then, and the Job controller marks
 * the Job Complete only after its pod-event batching (about a second later). So a Job counts as
 * succeeded from whichever comes first, its pod's success or its Complete condition.
 */
export async function recordStageJobs(h: ClusterHandle): Promise<JobRecorder> {
  const informer = new Informer<V1Job>(apiListWatch(h.cp.kubeConfig, `/apis/batch/v1/namespaces/${NAMESPACE}/jobs`), {
    resource: 'stage-jobs',
    logger: silentLogger(),
  });
  const pods = new Informer<V1Pod>(apiListWatch(h.cp.kubeConfig, `/api/v1/namespaces/${NAMESPACE}/pods`), {
    resource: 'stage-job-pods',
    logger: silentLogger(),
  });
  const jobs = new Map<string, StageJob>();
  /** Job uid → when one of its pods was first seen Succeeded, and that pod event's resourceVersion. */
  const podSucceededAt = new Map<string, { at: number; rv: string | undefined }>();
  // Jobs left from earlier tests (garbage collection takes a moment) are not this test's.
  const earlier = new Set<string>();
  let synced = false;
  const waiters: { count: number; resolve: () => void }[] = [];
  const wake = (): void => {
    for (const waiter of waiters.filter((w) => jobs.size >= w.count)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };
  const record = (uid: string, update: (previous: StageJob) => StageJob): void => {
    const previous = jobs.get(uid);
    if (previous) jobs.set(uid, update(previous));
  };
  const podSucceeded = (jobUid: string, { at, rv }: { at: number; rv: string | undefined }): void =>
    record(jobUid, (job) => ({
      ...job,
      succeeded: !job.failed,
      doneAt: job.doneAt ?? at,
      doneRv: earlierRv(job.doneRv, rv),
    }));
  const seen = (job: V1Job): void => {
    const labels = job.metadata?.labels ?? {};
    const uid = job.metadata?.uid ?? '';
    if (!synced) earlier.add(uid);
    if (earlier.has(uid)) return;
    const previous = jobs.get(uid);
    const condition = (type: string): boolean =>
      job.status?.conditions?.some((c) => c.type === type && c.status === 'True') ?? false;
    jobs.set(uid, {
      name: job.metadata?.name ?? '',
      uid,
      node: labels[CHILD_LABELS.node] ?? '',
      skyhook: labels[CHILD_LABELS.name] ?? '',
      package: labels[CHILD_LABELS.package] ?? '',
      stage: labels[CHILD_LABELS.stage] ?? '',
      failed: (previous?.failed ?? false) || condition('Failed'),
      succeeded: (previous?.succeeded ?? false) || condition('Complete'),
      seenAt: previous?.seenAt ?? Date.now(),
      doneAt: previous?.doneAt ?? (condition('Complete') || condition('Failed') ? Date.now() : undefined),
      seenRv: previous?.seenRv ?? job.metadata?.resourceVersion,
      doneRv: earlierRv(
        previous?.doneRv,
        condition('Complete') || condition('Failed') ? job.metadata?.resourceVersion : undefined,
      ),
    });
    const podDone = podSucceededAt.get(uid);
    if (podDone !== undefined) podSucceeded(uid, podDone);
    wake();
  };
  const podSeen = (pod: V1Pod): void => {
    if (pod.status?.phase !== 'Succeeded') return;
    const jobUid = pod.metadata?.ownerReferences?.find((ref) => ref.kind === 'Job')?.uid;
    if (!jobUid || podSucceededAt.has(jobUid)) return;
    podSucceededAt.set(jobUid, { at: Date.now(), rv: pod.metadata?.resourceVersion });
    podSucceeded(jobUid, podSucceededAt.get(jobUid)!);
  };
  informer.on({ add: seen, update: seen });
  pods.on({ add: podSeen, update: podSeen });
  informer.start();
  pods.start();
  await Promise.all([informer.waitForSync(30_000), pods.waitForSync(30_000)]);
  synced = true;
  return {
    jobs,
    stagesByNode: (skyhook, pkg) => {
      const result: Record<string, string[]> = {};
      for (const job of jobs.values()) {
        if (job.skyhook !== skyhook || (pkg !== undefined && job.package !== pkg)) continue;
        result[job.node] = [...(result[job.node] ?? []), job.stage];
      }
      return result;
    },
    whenSeen: (count) =>
      new Promise<void>((resolve) => {
        waiters.push({ count, resolve });
        wake();
      }),
    stop: async () => {
      await Promise.all([informer.stop(), pods.stop()]);
    },
  };
}

/** The most nodes seen at once with `status_<skyhook>` in progress (or erroring, as upstream counts), over a whole test. */
export interface InProgressWatcher {
  max(): number;
  stop(): Promise<void>;
}

export async function watchNodesInProgress(h: ClusterHandle, skyhook: string): Promise<InProgressWatcher> {
  const informer = new Informer<V1Node>(apiListWatch(h.cp.kubeConfig, '/api/v1/nodes'), {
    resource: 'nodes-in-progress',
    logger: silentLogger(),
  });
  let max = 0;
  const count = (): void => {
    const busy = informer
      .list()
      .filter((node) =>
        ['in_progress', 'erroring'].includes(node.metadata?.annotations?.[nodeAnnotations.status(skyhook)] ?? ''),
      ).length;
    max = Math.max(max, busy);
  };
  informer.on({ add: count, update: count, delete: count });
  informer.start();
  await informer.waitForSync(30_000);
  return { max: () => max, stop: () => informer.stop() };
}

/**
 * The batches of `nodes` in the order they ran: a node whose first Job appeared before every node
 * of the current batch had finished belongs to that batch (a strategy starts the next batch only
 * when no node of the compartment is in progress).
 */
export function batches(jobs: JobRecorder, skyhook: string, nodes: string[]): string[][] {
  const spans = nodes
    .map((node) => {
      const own = [...jobs.jobs.values()].filter((job) => job.skyhook === skyhook && job.node === node);
      return {
        node,
        start: Math.min(...own.map((j) => j.seenAt)),
        end: Math.max(...own.map((j) => j.doneAt ?? Infinity)),
      };
    })
    .filter((span) => Number.isFinite(span.start))
    .sort((a, b) => a.start - b.start);
  const result: string[][] = [];
  let batchEnd = -Infinity;
  for (const span of spans) {
    const current = result.at(-1);
    if (current === undefined || span.start > batchEnd) {
      result.push([span.node]);
      batchEnd = span.end;
    } else {
      current.push(span.node);
      batchEnd = Math.max(batchEnd, span.end);
    }
  }
  return result;
}

export const batchSizes = (found: string[][]): number[] => found.map((batch) => batch.length);

/**
 * Most Jobs running at once (first seen, not yet done), from their creation and completion
 * resourceVersions: every Job is counted from its own watch events, in the API server's one order,
 * so no overlap can fall between two samples. A Job never seen done counts as running to the end.
 */
export function maxRunningJobs(jobs: Iterable<StageJob>): number {
  const edges: { rv: number; delta: number }[] = [];
  for (const job of jobs) {
    if (job.seenRv === undefined) continue;
    edges.push({ rv: Number(job.seenRv), delta: 1 });
    if (job.doneRv !== undefined) edges.push({ rv: Number(job.doneRv), delta: -1 });
  }
  // At one revision an end comes before a start (one write cannot be both).
  edges.sort((a, b) => a.rv - b.rv || a.delta - b.delta);
  let running = 0;
  let max = 0;
  for (const edge of edges) {
    running += edge.delta;
    max = Math.max(max, running);
  }
  return max;
}
