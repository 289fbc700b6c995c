/**
 * The stage ops of one planning run indexed once (by SCR, by SCR and node, by node), so no phase
 * filters every op for every node: at 5000 nodes that filter was most of a pass (O(nodes x ops)).
 * Built per run from `PlannerInput.stageOps`; plain maps, nothing kept between runs.
 */
import type { StageOpSummary } from './planner-types.js';

const NONE: readonly StageOpSummary[] = Object.freeze([]);

export class OpIndex {
  private readonly bySkyhook = new Map<string, StageOpSummary[]>();
  private readonly bySkyhookNode = new Map<string, Map<string, StageOpSummary[]>>();
  private readonly byNode = new Map<string, StageOpSummary[]>();

  constructor(ops: readonly StageOpSummary[]) {
    for (const op of ops) {
      push(this.bySkyhook, op.skyhook, op);
      push(this.byNode, op.node, op);
      let nodes = this.bySkyhookNode.get(op.skyhook);
      if (nodes === undefined) {
        nodes = new Map();
        this.bySkyhookNode.set(op.skyhook, nodes);
      }
      push(nodes, op.node, op);
    }
  }

  /** The SCR's ops on any node, in input order. */
  ofSkyhook(skyhook: string): StageOpSummary[] {
    return [...(this.bySkyhook.get(skyhook) ?? NONE)];
  }

  /** The SCR's ops on the node, in input order (shared: do not change it). */
  onNode(skyhook: string, node: string): readonly StageOpSummary[] {
    return this.bySkyhookNode.get(skyhook)?.get(node) ?? NONE;
  }

  /** Every SCR's ops on the node, in input order (shared: do not change it). */
  allOnNode(node: string): readonly StageOpSummary[] {
    return this.byNode.get(node) ?? NONE;
  }
}

function push<K>(map: Map<K, StageOpSummary[]>, key: K, op: StageOpSummary): void {
  const list = map.get(key);
  if (list) list.push(op);
  else map.set(key, [op]);
}
