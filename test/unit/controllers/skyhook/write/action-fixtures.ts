/**
 * Planner actions built by hand for the writer's tests (apply-steps, concurrent-apply): the empty
 * buckets of `orderSteps` and the node writes of SCR `s`.
 */
import type { ActionBuckets } from '../../../../../src/controllers/skyhook/plan/action-order.js';
import type { SetNodeStatus } from '../../../../../src/controllers/skyhook/plan/planner-types.js';

export const emptyBuckets = (): ActionBuckets => ({
  failureReports: [],
  configMaps: [],
  nodeWrites: [],
  cordonReleases: [],
  slotTakers: [],
  nodeMetadata: [],
  deletes: [],
  suspends: [],
  creates: [],
  events: [],
});

export const nodeStatus = (node: string, value: 'in_progress' | 'complete'): SetNodeStatus => ({
  kind: 'setNodeStatus',
  skyhook: 's',
  node,
  status: value,
  operatorVersion: '1',
  conditions: [],
});
