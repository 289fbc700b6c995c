/**
 * What makes a NodeOp a Skyhook stage, as generic NodeOp fields: its ConfigMap mounts, its child
 * labels and its drain's exemptions. One definition for the stage builder
 * (controllers/skyhook/build/stage-nodeop.ts) and for NodeOps written by skyhook-ts 0.1.0
 * (legacy-stage-fields.ts), so an upgraded op reads exactly as a new one is built.
 */
import { CHILD_LABELS, STAGE_MOUNTS } from '../api/names.js';
import type { ConfigMapMount, DrainOptions } from '../api/nodeop.js';
import { labelValue } from './object-names.js';

/** The package's ConfigMap (if any) and the node's metadata ConfigMap (if any), where upstream's stage pod has them. */
export function stageConfigMapMounts(packageConfigMap?: string, nodeMetadataConfigMap?: string): ConfigMapMount[] {
  return [
    ...(packageConfigMap
      ? [{ name: 'package-config', configMap: packageConfigMap, mountPath: STAGE_MOUNTS.packageConfigMap }]
      : []),
    ...(nodeMetadataConfigMap
      ? [{ name: 'node-metadata', configMap: nodeMetadataConfigMap, mountPath: STAGE_MOUNTS.nodeMetadata }]
      : []),
  ];
}

/** Labels naming the Skyhook, package and stage, so `kubectl logs -l` finds a stage. */
export function stageChildLabels(
  skyhook: string,
  pkg: { name: string; version: string },
  stage: string,
): Record<string, string> {
  return {
    [CHILD_LABELS.name]: labelValue(skyhook),
    [CHILD_LABELS.package]: labelValue(`${pkg.name}-${pkg.version}`),
    [CHILD_LABELS.stage]: stage,
  };
}

/**
 * The drain a stage asks for, with upstream's exemptions: its drain leaves kube-system and pods that
 * tolerate the cordon, which kubectl's (a plain NodeOp's) does not.
 */
export function stageDrain(drain: DrainOptions): DrainOptions {
  return { ...drain, exemptNamespaces: ['kube-system'], exemptCordonTolerating: true };
}
