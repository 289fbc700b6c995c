/**
 * The machine's floor under a rollout benchmark's wall time. On a CPU-saturated machine no operator
 * can finish faster than the CPU the whole cluster spends on the rollout allows: every node-stage
 * costs the control plane (API server, etcd, controllers, kwok) and the operator some CPU seconds,
 * and the machine has only so many cores. When that floor is above the ideal, a wall/ideal target
 * below floor/ideal cannot be met here whatever the operator does, and the run says so instead of
 * leaving the reader to guess whether the operator or the machine was slow. Pure, unit-tested.
 */

export interface FloorInput {
  /** CPU seconds the control plane and the operator spent during the run. */
  cpuSeconds: number;
  /** Stage Jobs that finished during the run. */
  nodeStagesDone: number;
  /** Stage Jobs of the whole rollout (the run may have stopped before). */
  nodeStagesTotal: number;
  cores: number;
  idealMs: number;
}

export interface MachineFloor {
  /** CPU seconds per finished node-stage, the run's own measure. */
  cpuPerNodeStageS: number;
  /** The whole rollout's CPU at that rate, spread over every core: no run here can be shorter. */
  floorS: number;
  /** floorS over the ideal: a wall/ideal ratio below this cannot be reached on this machine. */
  floorRatio: number;
  /** CPU per node-stage at which the floor would meet the ideal (what the cluster would need to spend). */
  cpuPerNodeStageForIdealS: number;
  explained: string;
}

const round = (x: number, digits = 2): number => Math.round(x * 10 ** digits) / 10 ** digits;

export function machineFloor({
  cpuSeconds,
  nodeStagesDone,
  nodeStagesTotal,
  cores,
  idealMs,
}: FloorInput): MachineFloor | undefined {
  if (nodeStagesDone <= 0 || cores <= 0 || idealMs <= 0) return undefined;
  const perNodeStage = cpuSeconds / nodeStagesDone;
  const floorS = (perNodeStage * nodeStagesTotal) / cores;
  const idealS = idealMs / 1000;
  const forIdeal = (idealS * cores) / nodeStagesTotal;
  return {
    cpuPerNodeStageS: round(perNodeStage, 3),
    floorS: round(floorS, 1),
    floorRatio: round(floorS / idealS),
    cpuPerNodeStageForIdealS: round(forIdeal, 3),
    explained:
      `${round(perNodeStage, 3)} CPU s per node-stage (control plane + operator) x ${nodeStagesTotal} node-stages / ` +
      `${cores} cores = ${round(floorS, 1)} s, ${round(floorS / idealS)} x the ideal ${idealS} s` +
      (floorS > idealS
        ? `; the ideal needs <= ${round(forIdeal, 3)} CPU s per node-stage on this machine`
        : '; the machine can keep up with the ideal'),
  };
}
