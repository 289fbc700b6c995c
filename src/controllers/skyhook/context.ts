/**
 * What the Skyhook controller's reconcile and writers share: the informer caches, the clients, the
 * settings, the event recorder and the write expectations (as nodeop/context.ts is for the NodeOp).
 */
import type { V1ConfigMap, V1Node, V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { DeploymentPolicy } from '../../api/deployment-policy.js';
import type { DisruptionBudget } from '../../api/disruption-budget.js';
import { API_GROUP, API_VERSION, KINDS } from '../../api/names.js';
import type { NodeOp } from '../../api/nodeop.js';
import type { PackageTrustPolicy } from '../../api/package-trust-policy.js';
import type { PackageTrustChecker } from '../trust/package-trust.js';
import type { Skyhook } from '../../api/skyhook.js';
import type { KubeClients } from '../../kube/client.js';
import { CustomObjects, type CustomResource } from '../../kube/custom-objects.js';
import type { EventRecorder } from '../../kube/events.js';
import type { Informer } from '../../kube/informer.js';
import type { DisruptionArbiter } from '../disruption/arbiter.js';
import type { SkyhookSettings } from './skyhook-settings.js';
import { type WriteLimit, writeLimit } from './write/bounded-writes.js';
import type { WriteExpectations } from './write/write-expectations.js';

export interface SkyhookCaches {
  skyhooks: Informer<Skyhook>;
  nodes: Informer<V1Node>;
  nodeOps: Informer<NodeOp>;
  configMaps: Informer<V1ConfigMap>;
  /** The per-node metadata ConfigMaps, metadata and data hash only (node-metadata.ts compactNodeMetadata). */
  nodeMetadata: Informer<V1ConfigMap>;
  /** Every pod of the cluster, for the pods bound to each node (podNonInterruptLabels). */
  pods: Informer<V1Pod>;
  deploymentPolicies: Informer<DeploymentPolicy>;
  /** Absent when the DisruptionBudget CRD is not installed (shared-arbiter.ts). */
  disruptionBudgets?: Informer<DisruptionBudget>;
  /** Absent when the PackageTrustPolicy CRD is not installed: images run unverified, as before. */
  trustPolicies?: Informer<PackageTrustPolicy>;
}

export interface SkyhookIo {
  clients: KubeClients;
  caches: SkyhookCaches;
  settings: SkyhookSettings;
  events: EventRecorder;
  expectations: WriteExpectations;
  /** Asked right before a cordon claim that newly disrupts a node is written (cluster-wide budgets). */
  arbiter: DisruptionArbiter;
  logger: Logger;
  now(): number;
  /** Verifies package images against the PackageTrustPolicies (trust-input.ts); absent = none checked. */
  trust?: PackageTrustChecker;
  /**
   * Bounds the writes in flight across the controller's workers (settings.writeConcurrency);
   * absent, each apply gets its own limiter of that size.
   */
  writeLimit?: WriteLimit;
}

const SKYHOOKS: CustomResource = { group: API_GROUP, version: API_VERSION, plural: KINDS.skyhook.plural };
const NODEOPS: CustomResource = { group: API_GROUP, version: API_VERSION, plural: KINDS.nodeOp.plural };

/** The SCRs (cluster-scoped), typed. */
export function skyhookObjects(io: Pick<SkyhookIo, 'clients'>): CustomObjects<Skyhook> {
  return new CustomObjects<Skyhook>(io.clients.custom, SKYHOOKS);
}

/** The stage NodeOps: NodeOps in the operator namespace, typed. */
export function stageNodeOps(io: Pick<SkyhookIo, 'clients' | 'settings'>): CustomObjects<NodeOp> {
  return new CustomObjects<NodeOp>(io.clients.custom, NODEOPS, io.settings.namespace);
}

/** The controller's shared write limiter, or one of `settings.writeConcurrency` for this caller alone. */
export function writeLimitOf(io: Pick<SkyhookIo, 'writeLimit' | 'settings'>): WriteLimit {
  return io.writeLimit ?? writeLimit(io.settings.writeConcurrency);
}
