/**
 * The NodeOp of one package stage on one node (pure), shaped after upstream's stage pod
 * (reference/skyhook.md §5.1): the package image copies the package onto the host, then the agent
 * runs `<stage>` and `<stage>-check` chrooted into the host mounted at /root. Those three steps are
 * the NodeOp's init steps, so a failing one fails the Job with its own container name; the main
 * container only marks the Job done (upstream's pause container). Interrupt stages run no agent: the
 * NodeOp's reboot pod performs the interrupt (spec.interrupt). What upstream's stage pod does beyond
 * a plain NodeOp (ConfigMap mounts, host network, drain exemptions, quiet events, child labels) is set
 * here as generic NodeOp fields; `skyhookStage` only records which stage the op stands for.
 */
import { createHash } from 'node:crypto';
import type { V1OwnerReference } from '@kubernetes/client-node';
import type { EnvVar } from '../../../api/k8s-schemas.js';
import {
  CHILD_ANNOTATIONS,
  CHILD_LABELS,
  GROUP_VERSION,
  KINDS,
  STAGE_MOUNTS,
  STAGE_OP_ANNOTATIONS,
} from '../../../api/names.js';
import type { InitStep, NodeOp, NodeOpSpec } from '../../../api/nodeop.js';
import type { Package, Skyhook } from '../../../api/skyhook.js';
import { labelValue, nodeMetadataConfigMapName, safeName } from '../../../templates/object-names.js';
// Every stage mounts the node's metadata ConfigMap: ensureNodeMetadata (node-metadata-writes.ts) writes it before the op.
import { stageChildLabels, stageConfigMapMounts, stageDrain } from '../../../templates/stage-fields.js';
import type { CreateStageOp } from '../plan/planner-types.js';
import type { SkyhookSettings } from '../skyhook-settings.js';
import { nameOf } from '../../../api/object-meta.js';
import { parseDurationMs } from '../../../util/duration.js';

/** Where the host's / appears in the stage containers (the agent's root_mount argument). */
export const ROOT_MOUNT = '/root';

/** Stages that run the agent (with a `-check` mode); the interrupt stages are done by the reboot pod. */
const AGENT_STAGES = new Set(['apply', 'config', 'upgrade', 'uninstall', 'post-interrupt']);

/** Upstream's stage pod name, so the name of a stage's NodeOp is predictable and stable across restarts. */
export function stageOpName(
  op: Pick<CreateStageOp, 'skyhook' | 'node' | 'stage'> & { package: { name: string; version: string } },
): string {
  return safeName(63, op.skyhook, op.package.name, op.package.version, op.stage, op.node);
}

/**
 * The package fields a stage's NodeOp is built from. When they change under a running op (same
 * version, new image or env…), the op is stale and the planner replaces it.
 */
export function packageSpecHash(
  pkg: Pick<Package, 'image' | 'containerSHA' | 'agentImageOverride' | 'env' | 'resources'>,
): string {
  const relevant = [
    pkg.image,
    pkg.containerSHA ?? '',
    pkg.agentImageOverride ?? '',
    pkg.env ?? [],
    pkg.resources ?? {},
  ];
  return createHash('sha256').update(JSON.stringify(relevant)).digest('hex').slice(0, 16);
}

/** `image:version`, or `image@sha256:…` when the package pins a digest. */
export function packageImageRef(pkg: { image: string; version: string; containerSHA?: string }): string {
  return pkg.containerSHA ? `${pkg.image}@${pkg.containerSHA}` : `${pkg.image}:${pkg.version}`;
}

export function skyhookOwnerReference(skyhook: Skyhook): V1OwnerReference {
  const { name, uid } = skyhook.metadata;
  if (!name || !uid) throw new Error('a Skyhook read from the API server has a name and a uid; this one has not');
  return { apiVersion: GROUP_VERSION, kind: KINDS.skyhook.kind, name, uid, controller: true, blockOwnerDeletion: true };
}

/** The package directory's entries that are our volume mounts, not files of the package image. */
const MOUNTED_ENTRIES = ['configmaps', 'node-metadata'];

/**
 * The package init container's copy of /skyhook-package onto the host (all stages of a package
 * version share one copy dir, as upstream). It never copies onto an existing entry: each entry of
 * the image replaces its old copy (removed first) and directories merge, so it works whatever the
 * image's `cp` (some builds refuse to replace a symlink, "File exists", and nvidia-tuned ships
 * relative symlinks; read-only files) and files a step wrote beside the package's own stay.
 * The configMap and node-metadata volumes are directories of symlinks (`key -> ..data/key`): their
 * keys are copied as regular files (what upstream's subPath mounts give) into a directory that is
 * kept, so a file a step wrote there (nvidia-tuned's `tuned_profile`) reaches the later stages as
 * with upstream; the keys copied last time are listed in `.<volume>-keys` so a key the SCR no
 * longer has disappears.
 */
export function packageCopyScript(): string {
  return [
    'set -e',
    `dest="${ROOT_MOUNT}\${SKYHOOK_DIR}"`,
    'mkdir -p "$dest"',
    'place() {',
    '  if [ -d "$1" ] && [ ! -L "$1" ] && [ -d "$2" ] && [ ! -L "$2" ]; then (merge "$1" "$2")',
    '  else rm -rf "$2"; cp -RP "$1" "$2"; fi',
    '}',
    'merge() {',
    '  for e in "$1"/* "$1"/.[!.]* "$1"/..?*; do',
    `    if [ -e "$e" ] || [ -L "$e" ]; then place "$e" "$2/\${e##*/}"; fi`,
    '  done',
    '}',
    `for mounted in ${MOUNTED_ENTRIES.join(' ')}; do`,
    '  src="/skyhook-package/$mounted"; dir="$dest/$mounted"; keys="$dest/.$mounted-keys"',
    '  if [ -f "$keys" ]; then',
    '    while IFS= read -r key; do [ -e "$src/$key" ] || rm -rf "$dir/$key"; done < "$keys"',
    '    rm -f "$keys"',
    '  fi',
    '  [ -d "$src" ] || continue',
    '  if [ -L "$dir" ] || [ ! -d "$dir" ]; then rm -rf "$dir"; mkdir -p "$dir"; fi',
    '  : > "$keys.new"',
    '  for f in "$src"/*; do',
    '    [ -e "$f" ] || continue',
    `    rm -rf "$dir/\${f##*/}"; cp -L "$f" "$dir/\${f##*/}"; echo "\${f##*/}" >> "$keys.new"`,
    '  done',
    '  mv "$keys.new" "$keys"',
    'done',
    'for entry in /skyhook-package/*; do',
    `  case "\${entry##*/}" in ${MOUNTED_ENTRIES.join('|')}) ;; *) place "$entry" "$dest/\${entry##*/}" ;; esac`,
    'done',
  ].join('\n');
}

export interface StageOpInput {
  op: CreateStageOp;
  skyhook: Skyhook;
  settings: SkyhookSettings;
}

/** Where a Skyhook package's configMap appears, as upstream's stage pods mount it. */
export const PACKAGE_CONFIGMAP_MOUNT = STAGE_MOUNTS.packageConfigMap;
/** Where the node's metadata ConfigMap appears (see STAGE_MOUNTS). */
export const NODE_METADATA_MOUNT = STAGE_MOUNTS.nodeMetadata;

/** The package copy, then (agent stages) the agent's `<stage>` and `<stage>-check`, as upstream's init containers. */
function stageInitSteps({ op, skyhook, settings }: StageOpInput, pkg: Package | undefined): InitStep[] {
  const scr = nameOf(skyhook);
  const uid = skyhook.metadata.uid ?? '';
  const generation = skyhook.metadata.generation ?? 0;
  const { name: pkgName, version } = op.package;
  const copyDir = `${settings.copyDirRoot}/${scr}/${pkgName}-${version}-${uid}-${generation}`;
  const agentEnv: EnvVar[] = [
    ...(pkg?.env ?? []),
    { name: 'SKYHOOK_LOG_DIR', value: `${settings.agentLogRoot}/${scr}` },
    { name: 'SKYHOOK_ROOT_DIR', value: `${settings.copyDirRoot}/${scr}` },
    { name: 'COPY_RESOLV', value: 'false' },
    { name: 'SKYHOOK_RESOURCE_ID', value: `${scr}-${uid}-${generation}_${pkgName}_${version}` },
  ];
  // An empty override is no override (upstream's rule); `??` made it an empty image the API server refused.
  const agentImage = pkg?.agentImageOverride || settings.agentImage;
  const prefix = pkgName.slice(0, 43);
  const agentStep = (mode: string, name: string): InitStep => ({
    name,
    image: agentImage,
    command: ['skyhook', 'agent', mode, ROOT_MOUNT, copyDir],
    env: agentEnv,
    ...(pkg?.resources ? { resources: pkg.resources } : {}),
  });
  return [
    {
      name: `${prefix}-init`,
      // A PackageTrustPolicy's verified digest, never the tag: a tag moved after verification cannot run.
      image: op.pinnedDigest ? `${op.package.image}@${op.pinnedDigest}` : packageImageRef(op.package),
      command: ['/bin/sh', '-c', packageCopyScript()],
      env: [{ name: 'SKYHOOK_DIR', value: copyDir }],
      // Upstream gives every container of the stage pod the package's resources, the copy included.
      ...(pkg?.resources ? { resources: pkg.resources } : {}),
    },
    ...(AGENT_STAGES.has(op.stage)
      ? [agentStep(op.stage, `${prefix}-${op.stage}`), agentStep(`${op.stage}-check`, `${prefix}-${op.stage}check`)]
      : []),
  ];
}

/** `gracefulShutdown` as the pods' terminationGracePeriodSeconds, whole seconds rounded down (metav1.Duration's). */
function gracePeriodOf(pkg: Package | undefined): { terminationGracePeriodSeconds?: number } {
  if (!pkg?.gracefulShutdown) return {};
  return { terminationGracePeriodSeconds: Math.floor(parseDurationMs(pkg.gracefulShutdown) / 1000) };
}

/** The operator-wide pull secret (IMAGE_PULL_SECRET) and the package's own, each once, the operator's first. */
function pullSecretsOf(
  operatorSecret: string,
  pkg: Package | undefined,
): { imagePullSecrets?: Array<{ name: string }> } {
  const names = [...new Set([operatorSecret, ...(pkg?.imagePullSecrets ?? []).map((s) => s.name)].filter(Boolean))];
  return names.length > 0 ? { imagePullSecrets: names.map((name) => ({ name })) } : {};
}

function stageNodeOpSpec(input: StageOpInput, pkg: Package | undefined): NodeOpSpec {
  const { op, skyhook, settings } = input;
  const scr = nameOf(skyhook);
  const { name: pkgName, version } = op.package;
  const { key, value, effect } = settings.runtimeRequiredTaint;
  return {
    targetNodes: [op.node],
    command: ['/bin/sh', '-c', `echo "stage ${op.stage} of ${pkgName}:${version} done on $NODE_NAME"`],
    initSteps: stageInitSteps(input, pkg),
    hostMountPath: ROOT_MOUNT,
    ...(pkg?.resources ? { resources: pkg.resources } : {}),
    tolerations: [{ key, operator: 'Equal', value, effect }, ...(skyhook.spec.additionalTolerations ?? [])],
    backoffLimit: settings.jobBackoffLimit,
    // Upstream's stage pods take the package's gracefulShutdown as their grace period (whole seconds).
    ...gracePeriodOf(pkg),
    // Stages of an interrupting package run on a node the planner cordoned under its own claim; the
    // NodeOp then finds it cordoned by someone else and leaves the uncordon to the planner.
    ...(op.cordon ? { cordon: true } : {}),
    ...(op.drain ? { drainOptions: stageDrain(op.drain) } : {}),
    ...(op.stageTimeoutSeconds ? { stageTimeout: `${op.stageTimeoutSeconds}s` } : {}),
    ...pullSecretsOf(settings.imagePullSecret, pkg),
    // The interrupt stages' reboot pod performs it.
    ...(op.interrupt ? { interrupt: op.interrupt } : {}),
    configMapMounts: stageConfigMapMounts(op.configMap, nodeMetadataConfigMapName(scr, op.node)),
    // Upstream's stage pods use the host network (package downloads, host services).
    hostNetwork: true,
    // The Skyhook controller records each stage's progress itself (Apply on the SCR, State on the node).
    eventVerbosity: 'Quiet',
    childLabels: stageChildLabels(scr, op.package, op.stage),
    skyhookStage: {
      skyhook: scr,
      package: {
        name: pkgName,
        version,
        image: op.package.image,
        ...(op.package.containerSHA ? { containerSHA: op.package.containerSHA } : {}),
      },
      stage: op.stage,
    },
  };
}

export function buildStageNodeOp(input: StageOpInput): NodeOp {
  const { op, skyhook, settings } = input;
  const scr = nameOf(skyhook);
  const { name: pkgName, version } = op.package;
  // Only the version the op is for: the uninstall of an old version has no spec package.
  const spec = skyhook.spec.packages?.[pkgName];
  const pkg = spec?.version === version ? spec : undefined;
  const containerSHA = op.package.containerSHA ? { containerSHA: op.package.containerSHA } : {};
  return {
    apiVersion: GROUP_VERSION,
    kind: KINDS.nodeOp.kind,
    metadata: {
      name: stageOpName(op),
      namespace: settings.namespace,
      labels: { ...stageChildLabels(scr, op.package, op.stage), [CHILD_LABELS.node]: labelValue(op.node) },
      annotations: {
        // Upstream's stage pod annotation: field order name, version, skyhook, stage, image[, containerSHA].
        [CHILD_ANNOTATIONS.package]: JSON.stringify({
          name: pkgName,
          version,
          skyhook: scr,
          stage: op.stage,
          image: op.package.image,
          ...containerSHA,
        }),
        [STAGE_OP_ANNOTATIONS.previousRestarts]: String(op.previousRestarts),
        [STAGE_OP_ANNOTATIONS.specHash]: packageSpecHash(pkg ?? { image: op.package.image, ...containerSHA }),
      },
      ownerReferences: [skyhookOwnerReference(skyhook)],
    },
    spec: stageNodeOpSpec(input, pkg),
  };
}
