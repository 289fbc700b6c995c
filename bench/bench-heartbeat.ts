/**
 * The simulated nodes' heartbeats in a benchmark cluster: Kubernetes' defaults (40 s leases, 50 s of
 * grace) up to 1000 nodes, and beyond that leases and grace scaled with the node count, so the
 * heartbeats cost the API server what they cost at 1000 nodes (about 100 Lease renewals a second).
 * Why: in a real cluster each kubelet heartbeats from its own machine; here kwok renews every node's
 * Lease from one process on the same 2 cores as the API server. At 5000 nodes and the default 40 s it
 * could not renew in time: the node lifecycle controller marked nodes Unknown and tainted them
 * unreachable (3.2 node patches and 2 node status updates per node-stage by kube-controller-manager,
 * 3.5 node status patches by kwok to undo them), the operator rightly held its stages off the tainted
 * nodes, and the rollout slowed to a third of its speed. That is the simulator starving, not a real
 * 5000-node cluster. Pure, unit-tested.
 */
import {
  DEFAULT_NODE_LEASE_SECONDS,
  DEFAULT_NODE_MONITOR_GRACE_SECONDS,
  type NodeHeartbeat,
} from '../src/sandbox/component-args.js';

/** The node count whose heartbeats at the defaults this machine carries without nodes going Unknown. */
const NODES_AT_DEFAULTS = 1000;

export function benchHeartbeat(nodes: number): NodeHeartbeat {
  const scale = Math.max(1, nodes / NODES_AT_DEFAULTS);
  return {
    leaseDurationSeconds: Math.round(DEFAULT_NODE_LEASE_SECONDS * scale),
    nodeMonitorGracePeriodSeconds: Math.round(DEFAULT_NODE_MONITOR_GRACE_SECONDS * scale),
  };
}
