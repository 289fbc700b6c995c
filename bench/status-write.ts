/**
 * `npm run bench -- status-write`: what one write of a large Skyhook status costs kube-apiserver,
 * with the status's per-node maps atomic for server-side field management (as our CRD declares
 * them, src/api/schema-helpers.ts PerNodeMap) and granular (the default for maps, as before). For
 * 1000 and 5000 nodes: the API server's CPU per status write, the stored object's size and the
 * size of its managedFields. Both variants run on one control plane in one run, alternately, so
 * their ratio holds on this shared, noisy machine.
 *
 * Each write is what the operator sends during a rollout: the whole status, with a few more nodes
 * complete than in the previous one (every node has an entry in nodeState, nodeStatus and
 * nodePriority, one package each).
 */
import { readFileSync } from 'node:fs';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { API_GROUP, API_VERSION, KINDS } from '../src/api/names.js';
import { customResourceDefinition } from '../src/api/resource-definition.js';
import { SKYHOOK_DEFINITION } from '../src/api/skyhook.js';
import type { SkyhookStatus } from '../src/api/skyhook-status.js';
import { errorMessage } from '../src/kube/errors.js';
import { startControlPlane, type ControlPlane } from '../src/sandbox/control-plane.js';
import { waitCrdsEstablished } from '../src/sandbox/crds-established.js';
import { CLOCK_TICKS_PER_SECOND, processTicks } from './cpu-usage.js';
import { SYNTHETIC_PACKAGE, syntheticNodeMaps } from './synthetic-status.js';

const SIZES = [1000, 5000];
const WRITES = 20;
const PER_NODE_MAPS = ['nodeState', 'nodeStatus', 'nodeBootIds', 'nodePriority'];
const VARIANTS = ['atomic', 'granular'] as const;
type Variant = (typeof VARIANTS)[number];
const NAME = 'status-write';
const ref = { group: API_GROUP, version: API_VERSION, plural: KINDS.skyhook.plural, name: NAME };

interface Case {
  nodes: number;
  variant: Variant;
  writes: number;
  apiserverCpuMsPerWrite: number | null;
  objectKb: number;
  managedFieldsKb: number;
  /** The API server's answer when it refused a write (the case stops there). */
  refused?: string;
  /**
   * Granular maps only: the stored object has no managedFields. The API server tried to store the
   * object with them, etcd refused it as larger than its request limit (1.5 MiB by default), and
   * the API server wrote it again without them (its retry for objects too large): the CPU of both
   * attempts, and no record of who owns what.
   */
  managedFieldsDropped?: true;
}

/** The Skyhook CRD as generated, or with its per-node status maps back to the default (granular). */
function skyhookCrd(variant: Variant): Record<string, unknown> {
  const crd = customResourceDefinition(SKYHOOK_DEFINITION);
  if (variant === 'granular') {
    const versions = (crd['spec'] as { versions: Array<{ schema: { openAPIV3Schema: SchemaNode } }> }).versions;
    for (const version of versions) {
      const status = version.schema.openAPIV3Schema.properties?.['status'];
      for (const map of PER_NODE_MAPS) delete status?.properties?.[map]?.['x-kubernetes-map-type'];
    }
  }
  return crd;
}
type SchemaNode = { properties?: Record<string, SchemaNode>; 'x-kubernetes-map-type'?: string };

/** The status of write `step`: node i is complete once i < step × nodes / WRITES. */
function statusAt(nodes: number, step: number): SkyhookStatus {
  const done = Math.floor((step * nodes) / WRITES);
  return {
    status: 'in_progress',
    completeNodes: `${done}/${nodes}`,
    nodesInProgress: nodes - done,
    ...syntheticNodeMaps(nodes, done),
  };
}

function apiserverTicks(cp: ControlPlane): number {
  const apiserver = cp.processes().find((p) => p.name === 'kube-apiserver');
  if (!apiserver) throw new Error('kube-apiserver is not running');
  return processTicks(readFileSync(`/proc/${apiserver.pid}/stat`, 'utf8'));
}

async function installCrd(cp: ControlPlane, variant: Variant): Promise<void> {
  const applied = await cp.kubectl(['apply', '--server-side', '--force-conflicts', '-f', '-'], {
    input: JSON.stringify(skyhookCrd(variant)),
  });
  if (applied.code !== 0) throw new Error(`applying the ${variant} Skyhook CRD failed: ${applied.stderr}`);
  await waitCrdsEstablished(cp, [`crd/${KINDS.skyhook.plural}.${API_GROUP}`]);
}

async function measure(cp: ControlPlane, api: CustomObjectsApi, nodes: number, variant: Variant): Promise<Case> {
  await installCrd(cp, variant);
  const body = {
    apiVersion: `${API_GROUP}/${API_VERSION}`,
    kind: 'Skyhook',
    metadata: { name: NAME },
    spec: {
      packages: { [SYNTHETIC_PACKAGE.name]: { version: SYNTHETIC_PACKAGE.version, image: SYNTHETIC_PACKAGE.image } },
    },
  };
  let object = (await api.createClusterCustomObject({ ...ref, body })) as Record<string, unknown>;
  let writes = 0;
  let refused: string | undefined;
  const before = apiserverTicks(cp);
  for (let step = 1; step <= WRITES; step++) {
    try {
      object = (await api.replaceClusterCustomObjectStatus({
        ...ref,
        body: { ...object, status: statusAt(nodes, step) },
      })) as Record<string, unknown>;
      writes++;
    } catch (e) {
      refused = errorMessage(e);
      break;
    }
  }
  const cpuMs = ((apiserverTicks(cp) - before) * 1000) / CLOCK_TICKS_PER_SECOND;
  const stored = (await api.getClusterCustomObject(ref)) as { metadata: { managedFields?: unknown[] } };
  await api.deleteClusterCustomObject(ref);
  const kb = (value: unknown): number => Math.round(Buffer.byteLength(JSON.stringify(value ?? null)) / 102.4) / 10;
  return {
    nodes,
    variant,
    writes,
    apiserverCpuMsPerWrite: writes > 0 ? Math.round(cpuMs / writes) : null,
    objectKb: kb(stored),
    managedFieldsKb: kb(stored.metadata.managedFields),
    ...(refused ? { refused } : {}),
    ...(variant === 'granular' && writes > 0 && !stored.metadata.managedFields?.length
      ? { managedFieldsDropped: true as const }
      : {}),
  };
}

export async function statusWrite(): Promise<Record<string, unknown>> {
  const cp = await startControlPlane({ nodes: 0, onProgress: (m) => console.error(`[bench] control plane: ${m}`) });
  try {
    const api = cp.kubeConfig.makeApiClient(CustomObjectsApi);
    const cases: Case[] = [];
    for (const nodes of SIZES) {
      for (const variant of VARIANTS) {
        const measured = await measure(cp, api, nodes, variant);
        console.error(`[bench] status-write ${JSON.stringify(measured)}`);
        cases.push(measured);
      }
    }
    const ratios = SIZES.map((nodes) => {
      const of = (variant: Variant) => cases.find((c) => c.nodes === nodes && c.variant === variant);
      const atomic = of('atomic')?.apiserverCpuMsPerWrite;
      const granular = of('granular')?.apiserverCpuMsPerWrite;
      return { nodes, granularOverAtomicCpu: atomic && granular ? Math.round((granular / atomic) * 100) / 100 : null };
    });
    return { writesPerCase: WRITES, cases, ratios };
  } finally {
    await cp.stop();
  }
}
