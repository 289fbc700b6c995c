/**
 * Per-node metadata ConfigMaps as upstream keeps them (reference/skyhook.md §3.8): one per SCR and
 * targeted node in the operator namespace, owned by the SCR, mounted by every stage Job at
 * /skyhook-package/node-metadata so packages find `${SKYHOOK_DIR}/node-metadata/{labels,annotations,
 * packages}.json` on the host. Pure: names, data, the cache's compact form, and which ones are stale.
 *
 * The JSON is written the way upstream's Go `json.Marshal` writes it, so a package that compares or
 * hashes these files sees the same bytes under either operator: compact, map keys sorted by bytes,
 * struct fields in declaration order, `omitempty` fields left out, `<`, `>`, `&`, U+2028 and U+2029
 * escaped as `\u003c`…, and an absent map as `null`.
 *
 * labels.json and annotations.json hold every label and annotation of the node, as upstream's do,
 * the operator's own `nodeState_<scr>`, `status_<scr>`, `version_<scr>`, `cordon_<scr>`,
 * `drainStart_<scr>`, `drainBlocked_<scr>` and `autoTaint_` among them: a package may read its own
 * node state there. Left out are only the keys of ours that upstream never writes (`waiting_`,
 * `recordedOps_`, the NodeOp's `cordoned-by`); under upstream a package would never see them.
 */
import { createHash } from 'node:crypto';
import type { V1ConfigMap, V1Node } from '@kubernetes/client-node';
import { CHILD_ANNOTATIONS, CHILD_LABELS, nodeAnnotations, NODEOP_NAMES, PREFIX } from '../../../api/names.js';
import type { Interrupt, Skyhook } from '../../../api/skyhook.js';
import { labelValue, nodeMetadataConfigMapName } from '../../../templates/object-names.js';
import { skyhookOwnerReference } from './stage-nodeop.js';
import { nameOf } from '../../../api/object-meta.js';

/** The three files, by key. */
export const NODE_METADATA_KEYS = {
  annotations: 'annotations.json',
  labels: 'labels.json',
  packages: 'packages.json',
} as const;

/**
 * Ours: a short hash of the ConfigMap's data, written with it, so the cache can hold the hash instead
 * of the data (5 SCRs × 1000 nodes of node annotations would otherwise be most of the heap).
 */
export const NODE_METADATA_HASH_ANNOTATION = `${PREFIX}/dataHash`;

/**
 * The node annotations of ours that upstream does not have (reference/skyhook.md §3.1,
 * nodewright-delta.md §3): why a node waits (`waiting_<scr>`), which finished ops are recorded
 * (`recordedOps_<scr>`), the copy of the node state it restores a corrupted one from
 * (`nodeStateCopy_<scr>`), and which NodeOp holds a cordon (`cordoned-by`). Taken from the builders
 * the operator writes them with, so the two cannot drift apart.
 */
const OURS_ONLY_PREFIXES = [
  nodeAnnotations.waiting(''),
  nodeAnnotations.recordedOps(''),
  nodeAnnotations.nodeStateCopy(''),
];
const OURS_ONLY_KEYS: ReadonlySet<string> = new Set([NODEOP_NAMES.cordonedBy]);

/** True for a node key only this operator writes (left out of labels.json and annotations.json). */
export function isOursOnlyKey(key: string): boolean {
  return OURS_ONLY_KEYS.has(key) || OURS_ONLY_PREFIXES.some((prefix) => key.startsWith(prefix));
}

// Kept with the other object names so stage-nodeop.ts can name it without importing this module (which imports it).
export { nodeMetadataConfigMapName };

/**
 * `agentVersion`: the tag of the agent image. Upstream takes the text after the last `:` (its
 * settings insist on one). That misreads a registry port (`registry:5000/agent` → `5000/agent`) and
 * a digest (`agent@sha256:…` → the hex), so: any `@digest` is dropped first, the tag is the text
 * after a `:` that follows the last `/`, and an image without a tag gives `latest`, the tag a
 * container runtime pulls for it. For every `repo:tag` image the result is upstream's.
 */
export function agentVersion(agentImage: string): string {
  const ref = agentImage.split('@')[0] ?? '';
  const colon = ref.lastIndexOf(':');
  return colon > ref.lastIndexOf('/') ? ref.slice(colon + 1) : 'latest';
}

// --- Go encoding/json, for the shapes written here -------------------------------------------

const GO_ESCAPES: Record<string, string> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

function goString(text: string): string {
  return JSON.stringify(text).replace(/[<>&\u2028\u2029]/g, (c) => GO_ESCAPES[c] ?? c);
}

/** Go sorts map keys by their UTF-8 bytes; JS's default sort (UTF-16 units) differs above U+FFFF. */
function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

function goMap<V>(map: Readonly<Record<string, V>> | undefined, value: (v: V, key: string) => string): string {
  if (map === undefined) return 'null';
  return `{${Object.keys(map)
    .sort(byBytes)
    .map((key) => `${goString(key)}:${value(map[key]!, key)}`)
    .join(',')}}`;
}

/** Fields in order; `undefined` ones are left out (omitempty). */
function goStruct(fields: [string, string | undefined][]): string {
  return `{${fields
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${goString(k)}:${v!}`)
    .join(',')}}`;
}

function interruptJson(interrupt: Interrupt): string {
  return goStruct([
    ['type', goString(interrupt.type)],
    ['services', interrupt.services?.length ? `[${interrupt.services.map(goString).join(',')}]` : undefined],
  ]);
}

/** `{"agentVersion","packages":{"<key>":{"name","version","image","agentImageOverride"?,"interrupt"?,"configInterrupts"?}}}`. */
export function packagesJson(skyhook: Skyhook, agentImage: string): string {
  const packages = goMap(skyhook.spec.packages ?? {}, (pkg, key) =>
    goStruct([
      // The map key: upstream fills an empty name from it, and a set name must equal it.
      ['name', goString(key)],
      ['version', goString(pkg.version)],
      ['image', goString(pkg.image)],
      ['agentImageOverride', pkg.agentImageOverride ? goString(pkg.agentImageOverride) : undefined],
      ['interrupt', pkg.interrupt ? interruptJson(pkg.interrupt) : undefined],
      [
        'configInterrupts',
        pkg.configInterrupts && Object.keys(pkg.configInterrupts).length > 0
          ? goMap(pkg.configInterrupts, (i) => interruptJson(i))
          : undefined,
      ],
    ]),
  );
  return goStruct([
    ['agentVersion', goString(agentVersion(agentImage))],
    ['packages', packages],
  ]);
}

function withoutOursOnly(map: Record<string, string> | undefined): Record<string, string> | undefined {
  return map === undefined ? undefined : Object.fromEntries(Object.entries(map).filter(([key]) => !isOursOnlyKey(key)));
}

/** The ConfigMap's data: exactly the three files. */
export function nodeMetadataData(skyhook: Skyhook, node: V1Node, agentImage: string): Record<string, string> {
  return {
    [NODE_METADATA_KEYS.annotations]: goMap(withoutOursOnly(node.metadata?.annotations), (v) => goString(v)),
    [NODE_METADATA_KEYS.labels]: goMap(withoutOursOnly(node.metadata?.labels), (v) => goString(v)),
    [NODE_METADATA_KEYS.packages]: packagesJson(skyhook, agentImage),
  };
}

/** Short sha256 of the data, independent of key order. */
export function nodeMetadataHash(data: Readonly<Record<string, string>>): string {
  const canonical = JSON.stringify(
    Object.keys(data)
      .sort()
      .map((key) => [key, data[key]]),
  );
  return createHash('sha256').update(canonical).digest('hex').slice(0, 16);
}

/**
 * The ConfigMap as written. Upstream skips a node with neither labels nor annotations; we always
 * write it, since every stage Job mounts it and a Job whose ConfigMap is missing never starts.
 */
export function buildNodeMetadataConfigMap(
  skyhook: Skyhook,
  node: V1Node,
  namespace: string,
  agentImage: string,
): V1ConfigMap {
  const scr = nameOf(skyhook);
  const nodeName = nameOf(node);
  const data = nodeMetadataData(skyhook, node, agentImage);
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: nodeMetadataConfigMapName(scr, nodeName),
      namespace,
      labels: { [CHILD_LABELS.nodeMeta]: labelValue(scr) },
      annotations: {
        [CHILD_ANNOTATIONS.name]: scr,
        [CHILD_ANNOTATIONS.nodeName]: nodeName,
        [NODE_METADATA_HASH_ANNOTATION]: nodeMetadataHash(data),
      },
      ownerReferences: [skyhookOwnerReference(skyhook)],
    },
    data,
  };
}

/**
 * The informer's transform: metadata only (managedFields dropped, as by default), with the hash
 * annotation set to the hash of the data actually served, not trusting the written annotation, so
 * someone else's edit of the data still shows as a difference and is put right before the next stage.
 */
export function compactNodeMetadata(cm: V1ConfigMap): V1ConfigMap {
  const { managedFields: _dropped, ...metadata } = cm.metadata ?? {};
  return {
    apiVersion: cm.apiVersion ?? 'v1',
    kind: cm.kind ?? 'ConfigMap',
    metadata: {
      ...metadata,
      annotations: { ...metadata.annotations, [NODE_METADATA_HASH_ANNOTATION]: nodeMetadataHash(cm.data ?? {}) },
    },
  };
}

/** True when `cm` (from the API server, or compacted by the cache) holds `data`. */
export function sameData(cm: V1ConfigMap, data: Readonly<Record<string, string>>): boolean {
  const held = cm.data ? nodeMetadataHash(cm.data) : cm.metadata?.annotations?.[NODE_METADATA_HASH_ANNOTATION];
  return held === nodeMetadataHash(data);
}

/** This SCR's node-metadata ConfigMaps whose node it no longer targets (or that no longer exists). */
export function staleNodeMetadataConfigMaps(
  configMaps: V1ConfigMap[],
  skyhook: Skyhook,
  targetedNodes: ReadonlySet<string>,
): V1ConfigMap[] {
  const scr = nameOf(skyhook);
  return configMaps.filter((cm) => {
    const annotations = cm.metadata?.annotations ?? {};
    return (
      annotations[CHILD_ANNOTATIONS.name] === scr &&
      !cm.metadata?.deletionTimestamp &&
      !targetedNodes.has(annotations[CHILD_ANNOTATIONS.nodeName] ?? '')
    );
  });
}
