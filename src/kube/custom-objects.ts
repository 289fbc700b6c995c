/**
 * A typed client for one kind of custom object, in one namespace or cluster-wide. client-node's
 * CustomObjectsApi answers `any` and takes the group, version, plural (and namespace) on every call,
 * so each call site spelled out the coordinates and cast the answer (`as NodeOp`); this says both
 * once. It only forwards: one call of CustomObjectsApi per method, merge patches with the right
 * Content-Type (client.ts), errors thrown as they come (wrap a call in ignoreNotFound, writes.ts).
 */
import type { CustomObjectsApi, KubernetesObject } from '@kubernetes/client-node';
import { mergePatchCustomObject, mergePatchCustomObjectStatus, type CustomObjectRef } from './client.js';
import { nameOf } from '../api/object-meta.js';

/** The API coordinates of a custom resource kind. */
export interface CustomResource {
  group: string;
  version: string;
  plural: string;
}

/** How a delete treats the object's dependents (ownerReferences): the API's propagationPolicy. */
export type PropagationPolicy = 'Background' | 'Foreground' | 'Orphan';

export class CustomObjects<T extends KubernetesObject> {
  private readonly api: CustomObjectsApi;
  private readonly resource: CustomResource;
  private readonly namespace?: string;
  /** `namespace` undefined: a cluster-scoped kind. */
  constructor(api: CustomObjectsApi, resource: CustomResource, namespace?: string) {
    this.api = api;
    this.resource = resource;
    this.namespace = namespace;
  }

  async get(name: string): Promise<T> {
    const { group, version, plural } = this.resource;
    const { namespace } = this;
    const result: unknown =
      namespace === undefined
        ? await this.api.getClusterCustomObject({ group, version, plural, name })
        : await this.api.getNamespacedCustomObject({ group, version, plural, namespace, name });
    return result as T;
  }

  /** Every object of the kind (in the namespace): one unpaged list. */
  async list(): Promise<T[]> {
    const { group, version, plural } = this.resource;
    const { namespace } = this;
    const result: unknown =
      namespace === undefined
        ? await this.api.listClusterCustomObject({ group, version, plural })
        : await this.api.listNamespacedCustomObject({ group, version, plural, namespace });
    return (result as { items: T[] }).items;
  }

  async create(body: T): Promise<T> {
    const { group, version, plural } = this.resource;
    const { namespace } = this;
    const result: unknown =
      namespace === undefined
        ? await this.api.createClusterCustomObject({ group, version, plural, body })
        : await this.api.createNamespacedCustomObject({ group, version, plural, namespace, body });
    return result as T;
  }

  /** JSON merge patch (`null` values delete fields); a `metadata.resourceVersion` in it makes it conditional. */
  mergePatch(name: string, patch: object): Promise<T> {
    return mergePatchCustomObject<T>(this.api, this.ref(name), patch);
  }

  /** JSON merge patch of the status subresource: `status` is merged into `.status`. */
  patchStatus(name: string, status: object): Promise<T> {
    return mergePatchCustomObjectStatus<T>(this.api, this.ref(name), status);
  }

  /**
   * PUT of the status subresource: the whole status replaced (map entries left out go away), under
   * the body's `metadata.resourceVersion` when it has one (a stale one fails with a Conflict).
   */
  async replaceStatus(body: T): Promise<T> {
    const { group, version, plural } = this.resource;
    const { namespace } = this;
    const name = nameOf(body);
    const result: unknown =
      namespace === undefined
        ? await this.api.replaceClusterCustomObjectStatus({ group, version, plural, name, body })
        : await this.api.replaceNamespacedCustomObjectStatus({ group, version, plural, namespace, name, body });
    return result as T;
  }

  async delete(name: string, options: { propagationPolicy?: PropagationPolicy } = {}): Promise<void> {
    const { group, version, plural } = this.resource;
    const { namespace } = this;
    const { propagationPolicy } = options;
    const policy = propagationPolicy === undefined ? {} : { propagationPolicy };
    if (namespace === undefined) await this.api.deleteClusterCustomObject({ group, version, plural, name, ...policy });
    else await this.api.deleteNamespacedCustomObject({ group, version, plural, namespace, name, ...policy });
  }

  private ref(name: string): CustomObjectRef {
    const { group, version, plural } = this.resource;
    const { namespace } = this;
    return namespace === undefined ? { group, version, plural, name } : { group, version, plural, name, namespace };
  }
}
