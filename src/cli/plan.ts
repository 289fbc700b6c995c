/**
 * `skyhook plan -f scr.yaml`: what applying the SCR would do on the current cluster, without
 * changing anything (only list calls are made). The SCR is validated as the API server would
 * (schema and defaults); if an SCR of that name exists its status and annotations are kept and the
 * file's spec replaces its spec. Then the controller's planner plays the rollout forward
 * (plan/simulation.ts) and the report says which nodes run what, in which batch, and what blocks.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { V1Pod } from '@kubernetes/client-node';
import { parseAllDocuments, stringify } from 'yaml';
import { API_GROUP, API_VERSION, KINDS } from '../api/names.js';
import type { NodeOp } from '../api/nodeop.js';
import { OPERATOR_NAMESPACE } from '../api/operator-rbac.js';
import type { Skyhook } from '../api/skyhook.js';
import { validateSkyhook } from '../api/validators.js';
import { stageOpSummaries } from '../controllers/skyhook/op-summary.js';
import { configMapsOf, packageConfigMapData } from '../controllers/skyhook/package-configmaps.js';
import { nodeViewOf, type PlannerInput } from '../controllers/skyhook/planner.js';
import { errorMessage, isNotFound, loadKubeConfig, makeClients, type KubeClients } from '../kube/client.js';
import { renderPlan } from './plan/render.js';
import { buildPlanReport, type PlanReport, type PodView } from './plan/report.js';
import { simulateRollout } from './plan/simulation.js';

const HELP = `Usage: skyhook plan -f SCR.yaml [options]

Shows what applying the Skyhook would do on the current cluster, and changes nothing: the nodes it
selects, the batch each starts in, the stages each runs, which are cordoned, drained and
interrupted, and what blocks which node (ignore label, taints, an earlier Skyhook, protected pods).

Options:
  -f, --filename FILE   the Skyhook to plan (YAML or JSON; one Skyhook document)
  --kubeconfig FILE     kubeconfig to use (default: $KUBECONFIG, in-cluster, ~/.kube/config)
  -n, --namespace NS    the operator's namespace, where its NodeOps and ConfigMaps are (default: ${OPERATOR_NAMESPACE})
  -o, --output FORMAT   text|json|yaml (default: text)
`;

class PlanUsageError extends Error {}

/** The one Skyhook in the file, validated and defaulted as the API server would. */
export function readSkyhookDocument(text: string, file: string): Skyhook {
  const documents = parseAllDocuments(text);
  for (const document of documents) if (document.errors.length > 0) throw new Error(`${file}: not valid YAML: ${document.errors[0]!.message}`);
  const skyhooks = documents.map((document) => document.toJS() as unknown).filter((doc): doc is Record<string, unknown> => typeof doc === 'object' && doc !== null && (doc as { kind?: unknown }).kind === KINDS.skyhook.kind);
  if (skyhooks.length !== 1) throw new Error(`${file}: expected exactly one document of kind ${KINDS.skyhook.kind}, found ${skyhooks.length}`);
  const result = validateSkyhook(skyhooks[0]);
  if (!result.ok) throw new Error(`${file}: the Skyhook is not valid:\n  ${result.errors.join('\n  ')}`);
  if (!result.value.metadata?.name) throw new Error(`${file}: metadata.name is required`);
  return result.value;
}

/** The candidate as the cluster would hold it after an apply: the live object's status and annotations, the file's spec. */
export function asApplied(candidate: Skyhook, live: Skyhook | undefined): Skyhook {
  if (!live) return candidate;
  return {
    ...live,
    metadata: { ...live.metadata, annotations: { ...live.metadata.annotations, ...candidate.metadata.annotations } },
    spec: candidate.spec,
  };
}

export interface ClusterSnapshot {
  skyhooks: Skyhook[];
  input: PlannerInput;
  pods: PodView[];
}

async function readCluster(clients: KubeClients, namespace: string, candidate: Skyhook): Promise<ClusterSnapshot> {
  const { core, custom } = clients;
  const listSkyhooks = custom.listClusterCustomObject({ group: API_GROUP, version: API_VERSION, plural: KINDS.skyhook.plural }) as Promise<{ items: Skyhook[] }>;
  const listNodeOps = (custom.listNamespacedCustomObject({ group: API_GROUP, version: API_VERSION, plural: KINDS.nodeOp.plural, namespace }) as Promise<{ items: NodeOp[] }>)
    .catch((error: unknown) => {
      // No NodeOp CRD (operator not installed yet): no stage runs anywhere.
      if (isNotFound(error)) return { items: [] };
      throw error;
    });
  const [skyhookList, nodeList, nodeOpList, configMapList, podList] = await Promise.all([
    listSkyhooks,
    core.listNode(),
    listNodeOps,
    core.listNamespacedConfigMap({ namespace }),
    core.listPodForAllNamespaces({ fieldSelector: 'status.phase!=Succeeded,status.phase!=Failed' }),
  ]);
  const name = candidate.metadata.name ?? '';
  const others = skyhookList.items.filter((scr) => scr.metadata.name !== name && !scr.metadata.deletionTimestamp);
  const planned = asApplied(candidate, skyhookList.items.find((scr) => scr.metadata.name === name));
  const skyhooks = [...others, planned];
  return {
    skyhooks,
    input: {
      now: Date.now(),
      skyhooks: skyhooks.map((scr) => ({ skyhook: scr, packageConfigMaps: packageConfigMapData(configMapsOf(configMapList.items, scr.metadata.name ?? '')) })),
      nodes: nodeList.items.map(nodeViewOf),
      stageOps: stageOpSummaries(nodeOpList.items, skyhooks, namespace),
    },
    pods: podList.items.map(podView),
  };
}

function podView(pod: V1Pod): PodView {
  return { namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '', node: pod.spec?.nodeName ?? '', phase: pod.status?.phase ?? 'Pending', labels: pod.metadata?.labels ?? {} };
}

/** The plan of `candidate` against a snapshot (pure). */
export function planSkyhook(candidate: Skyhook, snapshot: ClusterSnapshot): PlanReport {
  const name = candidate.metadata.name ?? '';
  const skyhook = snapshot.skyhooks.find((scr) => scr.metadata.name === name) ?? candidate;
  const simulation = simulateRollout(snapshot.input, name);
  return buildPlanReport({ skyhook, skyhooks: snapshot.skyhooks, nodes: snapshot.input.nodes, pods: snapshot.pods, simulation });
}

function options(argv: string[]) {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        filename: { type: 'string', short: 'f' },
        kubeconfig: { type: 'string' },
        namespace: { type: 'string', short: 'n', default: OPERATOR_NAMESPACE },
        output: { type: 'string', short: 'o', default: 'text' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
    if (positionals.length > 0) throw new PlanUsageError(`unexpected argument '${positionals[0]}'`);
    if (!['text', 'table', 'json', 'yaml'].includes(values.output)) throw new PlanUsageError(`--output must be text, json or yaml, not '${values.output}'`);
    if (!values.help && !values.filename) throw new PlanUsageError('-f FILE is required: the Skyhook to plan');
    return values;
  } catch (error) {
    throw error instanceof PlanUsageError ? error : new PlanUsageError(error instanceof Error ? error.message : String(error));
  }
}

export async function runPlanCli(argv: string[]): Promise<number> {
  let values: ReturnType<typeof options>;
  try {
    values = options(argv);
  } catch (error) {
    console.error(`skyhook plan: ${(error as Error).message}\n\n${HELP}`);
    return 2;
  }
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  try {
    const file = values.filename!;
    const candidate = readSkyhookDocument(readFileSync(file, 'utf8'), file);
    const snapshot = await readCluster(makeClients(loadKubeConfig(values.kubeconfig)), values.namespace, candidate);
    const report = planSkyhook(candidate, snapshot);
    console.log(values.output === 'json' ? JSON.stringify(report, null, 2) : values.output === 'yaml' ? stringify(report).trimEnd() : renderPlan(report));
    return 0;
  } catch (error) {
    console.error(`skyhook plan: ${errorMessage(error)}`);
    return 1;
  }
}
