/**
 * The host side of NodeOp interrupts for the sandbox's simulated nodes, which have no host: KWOK
 * runs no containers, so nothing writes the sentinel, runs nsenter or reboots. This stands in for
 * the hosts, watching the cluster as the real pieces would see it:
 *
 *   - "the sentinel exists" for Job J on node N once a pod of J on N has Succeeded (its main
 *     container is the one that writes the sentinel);
 *   - a Running reboot pod (label `skyhook.nvidia.com/reboot`) waiting for J (annotation
 *     `skyhook.nvidia.com/job`) then "runs" the commands in its `skyhook.nvidia.com/interrupt`
 *     annotation: each is recorded in `interrupts`;
 *   - when the annotation says `rebootsNode`, the node reboots: its status gets a new
 *     `nodeInfo.bootID` and Ready=False, and the sandbox's node stage makes it Ready again (keeping the
 *     new bootID); the reboot pod then shows what the kubelet shows after restarting it and the
 *     container exiting 0 on the marker: phase Succeeded, restartCount 1;
 *   - otherwise the pod simply shows Succeeded.
 *
 * An interrupt whose API calls fail (an API server restarting) is tried again every second, as a
 * reboot pod's restarted container would; a node is never rebooted twice for one Job (the host's marker).
 *
 * Knobs: `delayMs` (how long after the sentinel the interrupt happens; default 500 ms) and
 * `failNodes` (nodes whose interrupt command "fails": the reboot pod shows exit code 1 and no reboot).
 * Start one per control plane; the Skyhook controller's interrupt stages can use it unchanged.
 * It acts only on simulated nodes (annotation `kwok.x-k8s.io/node: fake`), never on real ones.
 */
import { CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { KUBERNETES_NAMES, NODEOP_NAMES, SANDBOX_NAMES } from '../api/names.js';
import { mergePatchNodeStatus, MERGE_PATCH } from '../kube/client.js';
import { Informer } from '../kube/informer.js';
import { apiListWatch } from '../kube/list-watch.js';
import { silentLogger } from '../kube/logger.js';
import { nameOf } from '../api/object-meta.js';

export interface SimulatedInterrupt {
  node: string;
  pod: string;
  namespace: string;
  job: string;
  commands: string[][];
  rebootsNode: boolean;
  /** Set for reboots. */
  bootIdBefore?: string;
  bootIdAfter?: string;
  failed: boolean;
  at: number;
}

export interface SimulatedHostOptions {
  delayMs?: number;
  failNodes?: string[];
  logger?: Logger;
}

export interface SimulatedHost {
  /** Interrupts performed so far, in order. */
  readonly interrupts: readonly SimulatedInterrupt[];
  stop(): Promise<void>;
}

/** How soon an interrupt whose API calls failed is tried again. */
const RETRY_MS = 1000;

const terminated = (exitCode: number) => ({
  terminated: {
    exitCode,
    reason: exitCode === 0 ? 'Completed' : 'Error',
    startedAt: new Date(),
    finishedAt: new Date(),
  },
});

/** What the reboot pod's annotations ask of the host. */
function interruptRecord(pod: V1Pod, failNodes: Set<string>): SimulatedInterrupt {
  const node = pod.spec?.nodeName ?? '';
  const plan = JSON.parse(pod.metadata?.annotations?.[NODEOP_NAMES.interruptAnnotation] ?? '{}') as {
    commands?: string[][];
    rebootsNode?: boolean;
  };
  return {
    node,
    pod: nameOf(pod),
    namespace: pod.metadata?.namespace ?? '',
    job: pod.metadata?.annotations?.[NODEOP_NAMES.jobAnnotation] ?? '',
    commands: plan.commands ?? [],
    rebootsNode: plan.rebootsNode === true,
    failed: failNodes.has(node),
    at: Date.now(),
  };
}

/** What the kubelet shows when the interrupt command fails: the container restarts and crash-loops. */
async function showCrashLooping(core: CoreV1Api, pod: V1Pod, container: string): Promise<void> {
  await core.patchNamespacedPodStatus(
    {
      name: nameOf(pod),
      namespace: pod.metadata?.namespace ?? '',
      body: {
        status: {
          containerStatuses: [
            {
              name: container,
              image: pod.spec?.containers[0]?.image ?? '',
              imageID: '',
              ready: false,
              restartCount: 1,
              state: { waiting: { reason: 'CrashLoopBackOff' } },
              lastState: terminated(1),
            },
          ],
        },
      },
    },
    MERGE_PATCH,
  );
}

/** A reboot as the API sees it: a new bootID and Ready=False. Returns the bootIDs before and after. */
async function rebootNode(core: CoreV1Api, node: string): Promise<{ before: string | undefined; after: string }> {
  const before = await core.readNode({ name: node });
  const after = `boot-${randomUUID()}`;
  await mergePatchNodeStatus(core, node, {
    nodeInfo: { bootID: after },
    conditions: [
      {
        type: 'Ready',
        status: 'False',
        reason: 'Rebooting',
        message: 'simulated reboot',
        lastHeartbeatTime: new Date(),
        lastTransitionTime: new Date(),
      },
    ],
  });
  return { before: before.status?.nodeInfo?.bootID, after };
}

/** The reboot pod done: Succeeded, and after a reboot restarted once (killed by the reboot, then exit 0). */
async function showSucceeded(core: CoreV1Api, pod: V1Pod, container: string, rebootsNode: boolean): Promise<void> {
  await core.patchNamespacedPodStatus(
    {
      name: nameOf(pod),
      namespace: pod.metadata?.namespace ?? '',
      body: {
        status: {
          phase: 'Succeeded',
          conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: new Date() }],
          containerStatuses: [
            {
              name: container,
              image: pod.spec?.containers[0]?.image ?? '',
              imageID: '',
              ready: false,
              restartCount: rebootsNode ? 1 : 0,
              state: terminated(0),
              ...(rebootsNode ? { lastState: terminated(143) } : {}),
            },
          ],
        },
      },
    },
    MERGE_PATCH,
  );
}

export async function startSimulatedHost(kc: KubeConfig, options: SimulatedHostOptions = {}): Promise<SimulatedHost> {
  const logger = options.logger ?? silentLogger();
  const core = kc.makeApiClient(CoreV1Api);
  const pods = new Informer<V1Pod>(apiListWatch(kc, '/api/v1/pods'), {
    resource: 'simulated-host-pods',
    labelSelector: NODEOP_NAMES.nodeOpLabel,
    logger,
  });
  const interrupts: SimulatedInterrupt[] = [];
  const handled = new Set<string>();
  /**
   * `<node>/<job>` → the bootID the interrupt after that Job gave the node. Keyed as the real host keys
   * its `.done` marker (templates/reboot-pod.ts: one per Job name, on the node), not by reboot pod: a
   * reboot pod deleted after its reboot comes back, finds the marker and must not reboot again.
   */
  const rebooted = new Map<string, string>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const failNodes = new Set(options.failNodes ?? []);

  const sentinelWritten = (job: string, node: string, namespace: string): boolean =>
    pods
      .list(namespace)
      .some(
        (p) =>
          p.metadata?.labels?.[KUBERNETES_NAMES.jobNameLabel] === job &&
          p.spec?.nodeName === node &&
          p.status?.phase === 'Succeeded',
      );

  const perform = async (pod: V1Pod): Promise<void> => {
    const record = interruptRecord(pod, failNodes);
    // Real nodes (a kubelet of their own) do their interrupts themselves.
    const target = await core.readNode({ name: record.node });
    if (target.metadata?.annotations?.[SANDBOX_NAMES.simulatedNodeAnnotation] !== 'fake') return;
    const container = pod.spec?.containers[0]?.name ?? 'reboot';
    if (record.failed) {
      await showCrashLooping(core, pod, container);
    } else {
      const marker = `${record.node}/${pod.metadata?.annotations?.[NODEOP_NAMES.jobAnnotation] ?? ''}`;
      if (record.rebootsNode && !rebooted.has(marker)) {
        const { before, after } = await rebootNode(core, record.node);
        record.bootIdBefore = before;
        rebooted.set(marker, after);
      }
      if (record.rebootsNode) record.bootIdAfter = rebooted.get(marker);
      await showSucceeded(core, pod, container, record.rebootsNode);
    }
    interrupts.push(record);
    logger.info({ ...record }, 'simulated interrupt');
  };

  const consider = (): void => {
    for (const pod of pods.list()) {
      const uid = pod.metadata?.uid ?? '';
      const job = pod.metadata?.annotations?.[NODEOP_NAMES.jobAnnotation];
      if (handled.has(uid) || pod.metadata?.labels?.[NODEOP_NAMES.rebootLabel] !== 'true' || !job) continue;
      if (pod.status?.phase !== 'Running' || pod.metadata?.deletionTimestamp) continue;
      if (!sentinelWritten(job, pod.spec?.nodeName ?? '', pod.metadata?.namespace ?? '')) continue;
      handled.add(uid);
      const timer = setTimeout(() => {
        timers.delete(timer);
        perform(pod).catch((e: unknown) => {
          // The API server may be restarting: try again, as a host's reboot pod would (its container restarts).
          logger.error({ pod: pod.metadata?.name, err: String(e) }, 'simulated interrupt failed; retrying');
          handled.delete(uid);
          const retry = setTimeout(() => {
            timers.delete(retry);
            consider();
          }, RETRY_MS);
          timers.add(retry);
        });
      }, options.delayMs ?? 500);
      timers.add(timer);
    }
  };

  pods.on({ add: consider, update: consider });
  pods.start();
  await pods.waitForSync(30_000);
  return {
    interrupts,
    async stop() {
      for (const timer of timers) clearTimeout(timer);
      await pods.stop();
    },
  };
}
