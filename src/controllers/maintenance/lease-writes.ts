/**
 * The operator's writes to the per-node maintenance Leases (the grant annotation; deleting a deleted
 * node's Lease), and read-your-writes over the Lease cache. Slots are counted from grants, so a
 * reconcile that ran before the cache showed this process's last grant would count one holder too
 * few and grant a slot twice: the answer of each write is kept and preferred over an older cached
 * copy until the cache has caught up (resourceVersions of one object only grow, and client-go's
 * own informers compare them the same way for this purpose).
 */
import type { CoordinationV1Api, V1Lease } from '@kubernetes/client-node';
import {
  leaseStateOf,
  MAINTENANCE_LEASE,
  maintenanceLeaseName,
  type LeaseState,
  type MaintenanceGrant,
} from '../../api/maintenance-protocol.js';
import { nameOf } from '../../api/object-meta.js';
import { MERGE_PATCH } from '../../kube/client.js';
import type { Informer } from '../../kube/informer.js';
import { ignoreNotFound } from '../../kube/writes.js';

/** What this process last wrote to a Lease: the object (or its deletion) at that resourceVersion. */
type Written = { lease: V1Lease; rv: bigint } | { deleted: true; rv: bigint };

const rvOf = (lease: V1Lease | undefined): bigint => {
  try {
    return BigInt(lease?.metadata?.resourceVersion ?? '0');
  } catch {
    return 0n;
  }
};

export class LeaseWrites {
  private readonly written = new Map<string, Written>();
  private readonly coordination: CoordinationV1Api;
  private readonly namespace: string;
  private readonly cache: Informer<V1Lease>;

  constructor(coordination: CoordinationV1Api, namespace: string, cache: Informer<V1Lease>) {
    this.coordination = coordination;
    this.namespace = namespace;
    this.cache = cache;
  }

  /** The Lease as this process knows it best: the cache, or its own newer write. */
  lease(name: string): V1Lease | undefined {
    const cached = this.cache.get(name, this.namespace);
    const mine = this.written.get(name);
    if (!mine) return cached;
    if (cached && rvOf(cached) >= mine.rv) {
      this.written.delete(name);
      return cached;
    }
    if ('deleted' in mine) {
      if (!cached) this.written.delete(name);
      return undefined;
    }
    return mine.lease;
  }

  /** Every maintenance Lease's state (cache plus own newer writes). */
  states(): LeaseState[] {
    const names = new Set([...this.cache.list().map(nameOf), ...this.written.keys()]);
    return [...names].flatMap((name) => {
      const lease = this.lease(name);
      const state = lease && leaseStateOf(lease);
      return state ? [state] : [];
    });
  }

  state(node: string): LeaseState | undefined {
    const lease = this.lease(maintenanceLeaseName(node));
    return lease && leaseStateOf(lease);
  }

  /** Sets (or with null removes) the grant of `node`; NotFound when the Lease is gone. */
  async setGrant(node: string, grant: MaintenanceGrant | null): Promise<void> {
    const name = maintenanceLeaseName(node);
    const body = { metadata: { annotations: { [MAINTENANCE_LEASE.grant]: grant && JSON.stringify(grant) } } };
    const lease = await this.coordination.patchNamespacedLease({ name, namespace: this.namespace, body }, MERGE_PATCH);
    this.written.set(name, { lease, rv: rvOf(lease) });
  }

  /** Deletes the Lease of a deleted node (its daemon is gone with it). */
  async deleteLease(node: string): Promise<void> {
    const name = maintenanceLeaseName(node);
    const rv = rvOf(this.lease(name));
    await ignoreNotFound(this.coordination.deleteNamespacedLease({ name, namespace: this.namespace }));
    this.written.set(name, { deleted: true, rv: rv + 1n });
  }
}
