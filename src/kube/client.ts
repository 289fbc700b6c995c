/**
 * The one adapter around @kubernetes/client-node: where the KubeConfig comes from, the typed API
 * clients every controller shares, and patch helpers that always send the right Content-Type
 * (client-node's default is json-patch, which a merge-patch body silently breaks with a 415 or a
 * 422). Error predicates live in errors.ts (no client-node import) and are re-exported here.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import {
  BatchV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Node,
} from '@kubernetes/client-node';
import { SharedDispatcherKubeConfig } from './shared-dispatcher.js';

export {
  errorDetails,
  errorMessage,
  errorReason,
  isAlreadyExists,
  isConflict,
  isGone,
  isNotFound,
  isTooManyRequests,
  statusCode,
} from './errors.js';

export { SharedDispatcherKubeConfig } from './shared-dispatcher.js';

/** The field manager of every write the operator makes (server-side apply and managedFields). */
export const FIELD_MANAGER = 'skyhook-operator';

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/**
 * Loads the KubeConfig from, in order: `path` (the `--kubeconfig` flag), $KUBECONFIG, the pod's
 * service account (in-cluster), ~/.kube/config. Throws, saying what to pass, when none exists;
 * unlike client-node's loadFromDefault it never falls back to an unauthenticated localhost:8080.
 */
export function loadKubeConfig(path?: string): KubeConfig {
  const kc = new SharedDispatcherKubeConfig();
  const fromEnv = process.env['KUBECONFIG'];
  if (path) kc.loadFromFile(path);
  else if (fromEnv) kc.loadFromDefault();
  else if (existsSync(SERVICE_ACCOUNT_TOKEN)) kc.loadFromCluster();
  else if (existsSync(join(homedir(), '.kube', 'config'))) kc.loadFromDefault();
  else
    throw new Error(
      'no Kubernetes configuration found: pass --kubeconfig <file>, set KUBECONFIG, or run in a pod with a service account',
    );
  if (!kc.getCurrentCluster())
    throw new Error(`the kubeconfig ${path ?? fromEnv ?? ''} has no current cluster: set current-context`);
  return kc;
}

/** The typed clients, made once per process and shared by every controller. */
export interface KubeClients {
  kc: KubeConfig;
  core: CoreV1Api;
  batch: BatchV1Api;
  coordination: CoordinationV1Api;
  custom: CustomObjectsApi;
}

export function makeClients(kc: KubeConfig): KubeClients {
  return {
    kc,
    core: kc.makeApiClient(CoreV1Api),
    batch: kc.makeApiClient(BatchV1Api),
    coordination: kc.makeApiClient(CoordinationV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
  };
}

/** Options to pass as the last argument of any typed `patch…` call that sends a JSON merge patch. */
export const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
/** Options for a strategic merge patch (core kinds only): lists with a merge key, e.g. node conditions by type, are merged. */
export const STRATEGIC_MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

/** Where a custom object lives; `namespace` undefined means cluster-scoped. */
export interface CustomObjectRef {
  group: string;
  version: string;
  plural: string;
  name: string;
  namespace?: string;
}

/** JSON merge patch of a custom object (`null` values delete fields). Returns the object as stored. */
export async function mergePatchCustomObject<T>(
  custom: CustomObjectsApi,
  ref: CustomObjectRef,
  body: object,
): Promise<T> {
  const { group, version, plural, name, namespace } = ref;
  const result: unknown =
    namespace === undefined
      ? await custom.patchClusterCustomObject({ group, version, plural, name, body }, MERGE_PATCH)
      : await custom.patchNamespacedCustomObject({ group, version, plural, name, namespace, body }, MERGE_PATCH);
  return result as T;
}

/** JSON merge patch of a custom object's status subresource: `status` is merged into `.status`. */
export async function mergePatchCustomObjectStatus<T>(
  custom: CustomObjectsApi,
  ref: CustomObjectRef,
  status: object,
): Promise<T> {
  const { group, version, plural, name, namespace } = ref;
  const body = { status };
  const result: unknown =
    namespace === undefined
      ? await custom.patchClusterCustomObjectStatus({ group, version, plural, name, body }, MERGE_PATCH)
      : await custom.patchNamespacedCustomObjectStatus({ group, version, plural, name, namespace, body }, MERGE_PATCH);
  return result as T;
}

/** JSON merge patch of a node (labels, annotations, spec.unschedulable, taints). */
export function mergePatchNode(core: CoreV1Api, name: string, body: object): Promise<V1Node> {
  return core.patchNode({ name, body, fieldManager: FIELD_MANAGER }, MERGE_PATCH);
}

/** JSON merge patch of a node's status subresource (conditions). */
export function mergePatchNodeStatus(core: CoreV1Api, name: string, status: object): Promise<V1Node> {
  return core.patchNodeStatus({ name, body: { status }, fieldManager: FIELD_MANAGER }, MERGE_PATCH);
}
