/**
 * What it takes to turn a spec and a status schema into both a CustomResourceDefinition and the
 * schema of a whole document for ajv: one description per kind, so the two cannot drift apart.
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { Type, type TSchema } from 'typebox';
import { API_GROUP, API_VERSION } from './names.js';

export interface PrinterColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  readonly jsonPath: string;
  readonly description?: string;
  readonly priority?: number;
}

export interface ResourceDefinition {
  readonly names: {
    readonly kind: string;
    readonly listKind: string;
    readonly plural: string;
    readonly singular: string;
    readonly shortNames?: readonly string[];
  };
  readonly scope: 'Cluster' | 'Namespaced';
  readonly description: string;
  readonly spec: TSchema;
  readonly status: TSchema;
  readonly printerColumns: readonly PrinterColumn[];
}

/** `metadata` is validated by the API server itself; a CRD may only say it is an object. */
const ObjectMeta = Type.Unsafe<V1ObjectMeta>({ type: 'object' });

/** The schema with a description, unless it has its own (what `kubectl explain <kind>.spec` shows). */
function described<S extends TSchema>(schema: S, description: string): S {
  return { ...schema, description: (schema as { description?: string }).description ?? description };
}

/** The schema of one whole object of the kind: the CRD's `openAPIV3Schema` and ajv's input. */
export function documentSchema(def: ResourceDefinition) {
  return Type.Object(
    {
      apiVersion: Type.Optional(Type.String({ description: `${API_GROUP}/${API_VERSION}` })),
      kind: Type.Optional(Type.String({ description: def.names.kind })),
      metadata: Type.Optional(ObjectMeta),
      spec: described(def.spec, `What the ${def.names.kind} asks for; written by its author.`),
      status: Type.Optional(described(def.status, `What the operator observed; written by the operator only.`)),
    },
    { description: def.description },
  );
}

/** The CustomResourceDefinition object (plain JSON, ready for YAML or the API). */
export function customResourceDefinition(def: ResourceDefinition): Record<string, unknown> {
  const schema: unknown = JSON.parse(JSON.stringify(documentSchema(def)));
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${def.names.plural}.${API_GROUP}` },
    spec: {
      group: API_GROUP,
      names: { ...def.names, ...(def.names.shortNames ? { shortNames: [...def.names.shortNames] } : {}) },
      scope: def.scope,
      versions: [
        {
          name: API_VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          ...(def.printerColumns.length > 0
            ? { additionalPrinterColumns: def.printerColumns.map((column) => ({ ...column })) }
            : {}),
          schema: { openAPIV3Schema: schema },
        },
      ],
    },
  };
}
