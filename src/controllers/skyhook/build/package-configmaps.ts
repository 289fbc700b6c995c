/**
 * Package ConfigMaps as upstream keeps them (reference/skyhook.md §3.8): one per package with a
 * configMap, named `<skyhook>-<pkg>-<version>` in the operator namespace, owned by the SCR. Their
 * data is what the last config cycle delivered, which is how the planner detects config changes.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { CHILD_ANNOTATIONS, CHILD_LABELS } from '../../../api/names.js';
import type { Skyhook } from '../../../api/skyhook.js';
import { labelValue } from '../../../templates/object-names.js';
import { packageConfigMapName } from '../plan/config-cycle.js';
import { packageKey } from '../../../api/node-state.js';
import type { UpsertPackageConfigMap } from '../plan/planner-types.js';
import { skyhookOwnerReference } from './stage-nodeop.js';
import { nameOf } from '../../../api/object-meta.js';

export function buildPackageConfigMap(
  action: UpsertPackageConfigMap,
  skyhook: Skyhook,
  namespace: string,
): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: packageConfigMapName(action.skyhook, action.package, action.version),
      namespace,
      labels: { [CHILD_LABELS.name]: labelValue(action.skyhook) },
      annotations: {
        [CHILD_ANNOTATIONS.name]: action.skyhook,
        [CHILD_ANNOTATIONS.packageName]: action.package,
        [CHILD_ANNOTATIONS.packageVersion]: action.version,
      },
      ownerReferences: [skyhookOwnerReference(skyhook)],
    },
    data: action.data,
  };
}

/** The SCR's package ConfigMaps: those labelled with its name and annotated with its package. */
export function configMapsOf(configMaps: V1ConfigMap[], skyhook: string): V1ConfigMap[] {
  return configMaps.filter(
    (cm) =>
      cm.metadata?.annotations?.[CHILD_ANNOTATIONS.name] === skyhook &&
      cm.metadata.annotations[CHILD_ANNOTATIONS.packageName] !== undefined,
  );
}

/** The planner's input: data by `"<pkg>|<version>"`. */
export function packageConfigMapData(configMaps: V1ConfigMap[]): Record<string, Record<string, string>> {
  const data: Record<string, Record<string, string>> = {};
  for (const cm of configMaps) {
    const annotations = cm.metadata?.annotations ?? {};
    data[
      packageKey(annotations[CHILD_ANNOTATIONS.packageName] ?? '', annotations[CHILD_ANNOTATIONS.packageVersion] ?? '')
    ] = cm.data ?? {};
  }
  return data;
}

/** ConfigMaps of packages (or versions) no longer in the spec, or whose configMap was emptied: upstream deletes them. */
export function staleConfigMaps(configMaps: V1ConfigMap[], skyhook: Skyhook): V1ConfigMap[] {
  const scr = nameOf(skyhook);
  const wanted = new Set(
    Object.entries(skyhook.spec.packages ?? {})
      .filter(([, pkg]) => Object.keys(pkg.configMap ?? {}).length > 0)
      .map(([name, pkg]) => packageConfigMapName(scr, name, pkg.version)),
  );
  return configMaps.filter((cm) => !wanted.has(nameOf(cm)));
}
