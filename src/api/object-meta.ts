/**
 * The name and namespace of any Kubernetes object, '' when unset. client-node types every
 * `metadata.name` as optional (a create may ask the server to generate it), so reading it was
 * `x.metadata?.name ?? ''` at a hundred call sites. Here in api/ rather than kube/ because the pure
 * planner (controllers/skyhook/plan/) may import api/ but not kube/.
 */

/** Anything with Kubernetes object metadata: client-node's V1… types and our custom resources. */
export interface HasMetadata {
  metadata?: { name?: string; namespace?: string } | undefined;
}

/** `metadata.name`, or '' when unset. */
export function nameOf(object: HasMetadata): string {
  return object.metadata?.name ?? '';
}

/** `metadata.namespace`, or '' when unset (cluster-scoped objects). */
export function namespaceOf(object: HasMetadata): string {
  return object.metadata?.namespace ?? '';
}
