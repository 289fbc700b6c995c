/**
 * `skyhook plan -f scr.yaml`: what applying the SCR would do on the current cluster, without
 * changing anything (only list calls are made). The SCR is validated as the API server would
 * (schema and defaults); if an SCR of that name exists its status and annotations are kept and the
 * file's spec replaces its spec. The planner gets what the reconciler gives it (nodes with their
 * pods, stage NodeOps, package ConfigMaps, DeploymentPolicies), plays the rollout forward
 * (plan/simulation.ts), and the report says which nodes run what, in which batch, and what blocks.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import { parseAllDocuments, stringify } from 'yaml';
import { API_GROUP, API_VERSION, KINDS } from '../api/names.js';
import type { DeploymentPolicy } from '../api/deployment-policy.js';
import type { DisruptionBudget } from '../api/disruption-budget.js';
import type { NodeOp } from '../api/nodeop.js';
import type { PackageTrustPolicy } from '../api/package-trust-policy.js';
import { OPERATOR_NAMESPACE } from '../api/operator-rbac.js';
import type { Skyhook } from '../api/skyhook.js';
import { validateSkyhook } from '../api/validators.js';
import { stageOpSummaries } from '../controllers/skyhook/views/op-summary.js';
import { configMapsOf, packageConfigMapData } from '../controllers/skyhook/build/package-configmaps.js';
import { nodeViewOf } from '../controllers/skyhook/views/node-view.js';
import { evaluateHealthGates } from '../controllers/skyhook/views/health-gates/evaluate.js';
import { PrometheusGate } from '../controllers/skyhook/views/health-gates/prometheus-gate.js';
import type { PlannerInput, PodView } from '../controllers/skyhook/plan/planner-types.js';
import { retryWhileBusy } from '../kube/busy-retry.js';
import { errorMessage, loadKubeConfig, makeClients, statusCode, type KubeClients } from '../kube/client.js';
import { CustomObjects } from '../kube/custom-objects.js';
import { ignoreNotFound } from '../kube/writes.js';
import { plannedMaintenance } from './plan/maintenance.js';
import { renderPlan } from './plan/render.js';
import { readMaintenance } from './plugin/maintenance-read.js';
import type { MaintenanceRow } from './plugin/maintenance-view.js';
import { buildPlanReport, type PlanReport } from './plan/report.js';
import { simulateRollout } from './plan/simulation.js';
import { planPackageTrust } from './plan/trust.js';
import {
  budgetWindowSources,
  nextWindowTimestamp,
  nodeWindowVerdicts,
  policyWindowSources,
  type WindowSource,
} from '../controllers/skyhook/plan/maintenance-windows.js';
import { selectorMatches } from '../api/label-selector.js';
import { describeWindow } from '../util/time-window.js';
import { nameOf } from '../api/object-meta.js';

const HELP = `Usage: skyhook plan -f SCR.yaml [options]

Shows what applying the Skyhook would do on the current cluster, and changes nothing: the nodes it
selects, the batch each starts in, the stages each runs, which are cordoned, drained and
interrupted, what blocks which node (ignore label, taints, an earlier Skyhook, protected pods, a
package image a PackageTrustPolicy refuses: verified now, as the operator would), and
which of its nodes hold or wait for a node-initiated maintenance slot (MaintenancePolicy).

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
  for (const document of documents)
    if (document.errors.length > 0) throw new Error(`${file}: not valid YAML: ${document.errors[0]!.message}`);
  const skyhooks = documents
    .map((document) => document.toJS() as unknown)
    .filter(
      (doc): doc is Record<string, unknown> =>
        typeof doc === 'object' && doc !== null && (doc as { kind?: unknown }).kind === KINDS.skyhook.kind,
    );
  if (skyhooks.length !== 1)
    throw new Error(`${file}: expected exactly one document of kind ${KINDS.skyhook.kind}, found ${skyhooks.length}`);
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
  /** The SCR planned, as the cluster would hold it after an apply. */
  skyhook: Skyhook;
  input: PlannerInput;
  /** Node-initiated maintenance on the cluster's nodes (MaintenancePolicies and the daemons' Leases). */
  maintenance?: MaintenanceRow[];
}

async function readCluster(clients: KubeClients, namespace: string, candidate: Skyhook): Promise<ClusterSnapshot> {
  const { core, custom } = clients;
  // A CRD not installed (no NodeOps before the operator is): none of those objects exist.
  const list = async <T extends KubernetesObject>(plural: string, ns?: string): Promise<T[]> => {
    const objects = new CustomObjects<T>(custom, { group: API_GROUP, version: API_VERSION, plural }, ns);
    return (await ignoreNotFound(retryWhileBusy(() => objects.list()))) ?? [];
  };
  const [skyhookList, policies, budgets, trustPolicies, nodeList, nodeOps, configMapList, podList] = await Promise.all([
    list<Skyhook>(KINDS.skyhook.plural),
    list<DeploymentPolicy>(KINDS.deploymentPolicy.plural),
    list<DisruptionBudget>(KINDS.disruptionBudget.plural),
    list<PackageTrustPolicy>(KINDS.packageTrustPolicy.plural),
    retryWhileBusy(() => core.listNode()),
    list<NodeOp>(KINDS.nodeOp.plural, namespace),
    retryWhileBusy(() => core.listNamespacedConfigMap({ namespace })),
    retryWhileBusy(() =>
      core.listPodForAllNamespaces({ fieldSelector: 'status.phase!=Succeeded,status.phase!=Failed' }),
    ),
  ]);
  const name = nameOf(candidate);
  const planned = asApplied(
    candidate,
    skyhookList.find((scr) => scr.metadata.name === name),
  );
  const skyhooks = [
    ...skyhookList.filter((scr) => scr.metadata.name !== name && !scr.metadata.deletionTimestamp),
    planned,
  ];
  const podsOnNode = new Map<string, V1Pod[]>();
  for (const pod of podList.items) {
    const node = pod.spec?.nodeName;
    if (!node) continue;
    const onNode = podsOnNode.get(node);
    if (onNode) onNode.push(pod);
    else podsOnNode.set(node, [pod]);
  }
  // Every targeted node's gates, as they stand now: the simulation plays the rollout forward on them.
  const healthGates = await evaluateHealthGates({
    skyhooks,
    policies,
    nodes: nodeList.items,
    podsOn: (node) => podsOnNode.get(node) ?? [],
    prometheus: new PrometheusGate(),
    scope: 'all',
  });
  const packageTrust = await planPackageTrust(clients, namespace, skyhooks, trustPolicies);
  const podsByNode = new Map<string, PodView[]>([...podsOnNode].map(([node, pods]) => [node, pods.map(podView)]));
  // Maintenance is context, not the plan: a person who may not read the operator's Leases still gets the plan.
  const { rows: maintenance } = await readMaintenance(clients, namespace, nodeList.items).catch((e: unknown) => {
    if (statusCode(e) === 403) return { rows: [] };
    throw e;
  });
  return {
    skyhook: planned,
    maintenance,
    input: {
      now: Date.now(),
      skyhooks: skyhooks.map((scr) => ({
        skyhook: scr,
        packageConfigMaps: packageConfigMapData(configMapsOf(configMapList.items, nameOf(scr))),
      })),
      nodes: nodeList.items.map((node) => ({
        ...nodeViewOf(node),
        pods: podsByNode.get(nameOf(node)) ?? [],
      })),
      stageOps: stageOpSummaries(nodeOps, skyhooks, namespace),
      deploymentPolicies: policies,
      ...(healthGates ? { healthGates } : {}),
      disruptionBudgets: budgets,
      ...(packageTrust ? { packageTrust } : {}),
    },
  };
}

function podView(pod: V1Pod): PodView {
  const view: PodView = {
    namespace: pod.metadata?.namespace ?? '',
    name: nameOf(pod),
    labels: pod.metadata?.labels ?? {},
    phase: pod.status?.phase ?? 'Pending',
  };
  const owner = pod.metadata?.ownerReferences?.find((ref) => ref.controller)?.kind;
  if (owner) view.ownerKind = owner;
  if (pod.metadata?.deletionTimestamp) view.terminating = true;
  return view;
}

/** The plan of the snapshot's SCR (pure). */
export function planSkyhook(snapshot: ClusterSnapshot): PlanReport {
  const simulation = simulateRollout(snapshot.input, nameOf(snapshot.skyhook));
  const report = buildPlanReport(
    snapshot.skyhook,
    snapshot.input.nodes.map((node) => node.name),
    simulation,
  );
  const windows = maintenanceWindowsOf(snapshot);
  const maintenance = plannedMaintenance(snapshot.maintenance ?? [], new Set(report.nodes.map((n) => n.node)));
  return {
    ...report,
    ...(windows ? { maintenanceWindows: windows } : {}),
    ...(maintenance.length > 0 ? { maintenance } : {}),
  };
}

/**
 * The maintenance windows over the SCR's nodes as of the snapshot (its DeploymentPolicy's and those
 * of the DisruptionBudgets covering its nodes): open now for every node, or the earliest opening.
 */
function maintenanceWindowsOf(snapshot: ClusterSnapshot): PlanReport['maintenanceWindows'] {
  const { input, skyhook } = snapshot;
  const policy = input.deploymentPolicies?.find(
    (candidate) => candidate.metadata.name === skyhook.spec.deploymentPolicy,
  );
  const shared = policyWindowSources(policy);
  const covering = budgetWindowSources(input.disruptionBudgets);
  const nodes = input.nodes.filter((node) => selectorMatches(skyhook.spec.nodeSelectors, node.labels));
  const sources = new Map<string, WindowSource>();
  for (const source of [...shared, ...nodes.flatMap(covering)]) sources.set(`${source.kind}/${source.name}`, source);
  if (sources.size === 0) return undefined;
  const verdictOf = nodeWindowVerdicts(shared, covering, input.now);
  const closed = nodes.map(verdictOf).filter((verdict) => !verdict.open);
  const openings = closed.flatMap((verdict) =>
    verdict.open || verdict.nextOpen === undefined ? [] : [verdict.nextOpen],
  );
  return {
    sources: [...sources.values()].map(
      (source) => `${source.kind} ${source.name}: ${source.windows.map(describeWindow).join(', ')}`,
    ),
    open: closed.length === 0,
    closedNodes: closed.length,
    ...(openings.length > 0 ? { nextOpen: nextWindowTimestamp(Math.min(...openings)) } : {}),
  };
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
    if (!['text', 'table', 'json', 'yaml'].includes(values.output))
      throw new PlanUsageError(`--output must be text, json or yaml, not '${values.output}'`);
    if (!values.help && !values.filename) throw new PlanUsageError('-f FILE is required: the Skyhook to plan');
    return values;
  } catch (error) {
    throw error instanceof PlanUsageError
      ? error
      : new PlanUsageError(error instanceof Error ? error.message : String(error));
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
    const report = planSkyhook(snapshot);
    console.log(
      values.output === 'json'
        ? JSON.stringify(report, null, 2)
        : values.output === 'yaml'
          ? stringify(report).trimEnd()
          : renderPlan(report),
    );
    return 0;
  } catch (error) {
    console.error(`skyhook plan: ${errorMessage(error)}`);
    return 1;
  }
}
