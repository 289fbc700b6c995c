/**
 * What the Skyhook controller's reconcile and writers share: the informer caches, the clients, the
 * settings, the event recorder and the write expectations (as nodeop/context.ts is for the NodeOp).
 */
import type { V1ConfigMap, V1Node, V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { DeploymentPolicy } from '../../api/deployment-policy.js';
import { API_GROUP, API_VERSION, KINDS } from '../../api/names.js';
import type { NodeOp } from '../../api/nodeop.js';
import type { Skyhook } from '../../api/skyhook.js';
import type { KubeClients } from '../../kube/client.js';
import type { EventRecorder } from '../../kube/events.js';
import type { Informer } from '../../kube/informer.js';
import type { SkyhookSettings } from './skyhook-settings.js';
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
}

export interface SkyhookIo {
  clients: KubeClients;
  caches: SkyhookCaches;
  settings: SkyhookSettings;
  events: EventRecorder;
  expectations: WriteExpectations;
  logger: Logger;
  now(): number;
}

export const nodeOpRef = (settings: SkyhookSettings, name: string) => ({
  group: API_GROUP,
  version: API_VERSION,
  plural: KINDS.nodeOp.plural,
  namespace: settings.namespace,
  name,
});
