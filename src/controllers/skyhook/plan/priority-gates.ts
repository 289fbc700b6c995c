/**
 * Upstream's order between SCRs on a node: a later SCR waits there until every earlier, non-disabled
 * SCR is complete (with `sequencing: all`, complete everywhere). The planner fills it in SCR order.
 */
const NO_BLOCKERS: readonly string[] = Object.freeze([]);

/** The SCRs planned so far that still hold later ones back, per node and (sequencing: all) everywhere. */
export class PriorityGates {
  private readonly incompleteOn = new Map<string, string[]>();
  private readonly everywhere: string[] = [];

  add(skyhook: string, nodeStatus: Record<string, string>, sequencingAll: boolean): void {
    let incomplete = false;
    for (const node in nodeStatus) {
      if (nodeStatus[node] === 'complete') continue;
      incomplete = true;
      // Appended in place: copying the list for every node of every SCR was garbage on each pass.
      const list = this.incompleteOn.get(node);
      if (list) list.push(skyhook);
      else this.incompleteOn.set(node, [skyhook]);
    }
    if (sequencingAll && incomplete) this.everywhere.push(skyhook);
  }

  /** Earlier SCRs the node must finish first (shared: do not change it). */
  blockersOn(node: string): readonly string[] {
    const onNode = this.incompleteOn.get(node) ?? NO_BLOCKERS;
    return this.everywhere.length === 0 ? onNode : [...this.everywhere, ...onNode];
  }
}
