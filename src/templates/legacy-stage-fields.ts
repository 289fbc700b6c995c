/**
 * NodeOps created by skyhook-ts 0.1.0 carry a Skyhook stage's interrupt and ConfigMaps under
 * `spec.skyhookStage`, and the NodeOp controller of that version derived host network, quiet events,
 * the drain's exemptions and the child labels from `skyhookStage` itself. The NodeOp is generic now
 * (build/stage-nodeop.ts sets those as plain NodeOp fields), so a stage op still in flight across an
 * upgrade would lose its reboot or its mounts. Both controllers read NodeOps through this transform,
 * which gives such an op the generic fields the current Skyhook controller would have written; a
 * NodeOp without the old fields is returned as it is.
 */
import type { NodeOp, NodeOpSpec } from '../api/nodeop.js';
import { stageChildLabels, stageConfigMapMounts, stageDrain } from './stage-fields.js';

/** A NodeOp as the current API reads it: a 0.1.0 stage op gets its generic fields. */
export function upgradeLegacyStageFields(op: NodeOp): NodeOp {
  const stage = op.spec.skyhookStage;
  if (!stage || !isLegacyStage(op.spec)) return op;
  const { interrupt, configMap, nodeMetadataConfigMap, ...current } = stage;
  const mounts = stageConfigMapMounts(configMap, nodeMetadataConfigMap);
  const spec: NodeOpSpec = {
    ...op.spec,
    skyhookStage: current,
    hostNetwork: op.spec.hostNetwork ?? true,
    eventVerbosity: op.spec.eventVerbosity ?? 'Quiet',
    childLabels: op.spec.childLabels ?? stageChildLabels(stage.skyhook, stage.package, stage.stage),
  };
  if (interrupt && !spec.interrupt) spec.interrupt = interrupt;
  if (mounts.length > 0 && !spec.configMapMounts) spec.configMapMounts = mounts;
  if (spec.drainOptions && spec.drainOptions.exemptNamespaces === undefined)
    spec.drainOptions = stageDrain(spec.drainOptions);
  return { ...op, spec };
}

/**
 * Written by 0.1.0: it set the old fields, or it is a stage op without any of the generic ones the
 * current Skyhook controller always sets (it always sets hostNetwork and eventVerbosity).
 */
function isLegacyStage(spec: NodeOpSpec): boolean {
  const stage = spec.skyhookStage;
  if (!stage) return false;
  if (stage.interrupt || stage.configMap || stage.nodeMetadataConfigMap) return true;
  return spec.hostNetwork === undefined && spec.eventVerbosity === undefined;
}
