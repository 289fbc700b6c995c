/**
 * docs/reference/crds/<kind>.md: one row per field of a kind's CRD schema (type, default, validation,
 * description), read from the same schema the CRD is generated from, so the page and `kubectl explain`
 * say the same thing. `undescribedFields` lists the fields without a description: the docs test
 * requires none.
 */
import { customResourceDefinition, type ResourceDefinition } from '../../src/api/resource-definition.js';

/** The slice of an OpenAPI v3 schema the CRDs use. */
interface Schema {
  readonly type?: string;
  readonly description?: string;
  readonly default?: unknown;
  readonly nullable?: boolean;
  readonly enum?: readonly unknown[];
  readonly pattern?: string;
  readonly format?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly minProperties?: number;
  readonly maxProperties?: number;
  readonly required?: readonly string[];
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly additionalProperties?: Schema | boolean;
  readonly items?: Schema;
  readonly anyOf?: readonly Schema[];
  readonly 'x-kubernetes-int-or-string'?: boolean;
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean;
  readonly 'x-kubernetes-validations'?: ReadonlyArray<{ rule: string; message?: string }>;
}

export interface FieldRow {
  readonly path: string;
  readonly type: string;
  readonly required: boolean;
  readonly defaultValue: string;
  readonly validation: string;
  readonly description: string;
}

function rootSchema(def: ResourceDefinition): Schema {
  const crd = customResourceDefinition(def) as {
    spec: { versions: Array<{ schema: { openAPIV3Schema: Schema } }> };
  };
  return crd.spec.versions[0]!.schema.openAPIV3Schema;
}

function typeOf(schema: Schema): string {
  if (schema['x-kubernetes-int-or-string']) return 'int-or-string';
  if (schema.type === 'array') return `[]${schema.items ? typeOf(schema.items) : 'any'}`;
  if (schema.type === 'object' && typeof schema.additionalProperties === 'object' && !schema.properties)
    return `map[string]${typeOf(schema.additionalProperties)}`;
  if (schema.anyOf) return schema.anyOf.map(typeOf).join(' or ');
  return schema.type ?? 'any';
}

function validationOf(schema: Schema): string {
  const parts: string[] = [];
  if (schema.enum) parts.push(`one of ${schema.enum.map((v) => `\`${String(v)}\``).join(', ')}`);
  if (schema.format) parts.push(`format ${schema.format}`);
  if (schema.minimum !== undefined) parts.push(`≥ ${schema.minimum}`);
  if (schema.maximum !== undefined) parts.push(`≤ ${schema.maximum}`);
  if (schema.minLength !== undefined) parts.push(`length ≥ ${schema.minLength}`);
  if (schema.maxLength !== undefined) parts.push(`length ≤ ${schema.maxLength}`);
  if (schema.minItems !== undefined) parts.push(`items ≥ ${schema.minItems}`);
  if (schema.maxItems !== undefined) parts.push(`items ≤ ${schema.maxItems}`);
  if (schema.minProperties !== undefined) parts.push(`entries ≥ ${schema.minProperties}`);
  if (schema.maxProperties !== undefined) parts.push(`entries ≤ ${schema.maxProperties}`);
  if (schema.pattern !== undefined && !schema['x-kubernetes-int-or-string'])
    parts.push(`pattern \`${schema.pattern}\``);
  for (const rule of schema['x-kubernetes-validations'] ?? []) parts.push(`rule: ${rule.message ?? rule.rule}`);
  return parts.join('; ');
}

/** Every field, depth first, in schema order; `[]` marks an array's items, `<key>` a map's values. */
export function fieldRows(def: ResourceDefinition): FieldRow[] {
  const rows: FieldRow[] = [];
  const visit = (schema: Schema, path: string): void => {
    const required = new Set(schema.required ?? []);
    for (const [name, child] of Object.entries(schema.properties ?? {})) {
      const childPath = path ? `${path}.${name}` : name;
      rows.push({
        path: childPath,
        type: typeOf(child) + (child.nullable ? ' (nullable)' : ''),
        required: required.has(name),
        defaultValue: child.default === undefined ? '' : JSON.stringify(child.default),
        validation: validationOf(child),
        description: child.description ?? '',
      });
      descend(child, childPath);
    }
  };
  const descend = (schema: Schema, path: string): void => {
    visit(schema, path);
    if (schema.items) descend(schema.items, `${path}[]`);
    if (typeof schema.additionalProperties === 'object') descend(schema.additionalProperties, `${path}.<key>`);
    for (const variant of schema.anyOf ?? []) if (variant.properties) visit(variant, path);
  };
  descend(rootSchema(def), '');
  return rows;
}

/**
 * Paths of the fields that have no description (what `kubectl explain` would show empty). `metadata`
 * is Kubernetes' own: a CRD may not describe it (the API server refuses anything but its type), and
 * `kubectl explain` shows ObjectMeta's documentation.
 */
export function undescribedFields(def: ResourceDefinition): string[] {
  return fieldRows(def)
    .filter((row) => row.path !== 'metadata' && row.description.trim() === '')
    .map((row) => row.path);
}

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n+/g, ' ');

export function crdPageName(def: ResourceDefinition): string {
  return `docs/reference/crds/${def.names.singular}.md`;
}

export function renderCrdPage(def: ResourceDefinition, group: string, version: string): string {
  const lines = [
    `# ${def.names.kind}`,
    '',
    '<!-- Generated from src/api by `npm run gen:docs`; do not edit. -->',
    '',
    `\`${group}/${version}\`, kind \`${def.names.kind}\`, ${def.scope === 'Cluster' ? 'cluster-scoped' : 'namespaced'} ` +
      `(\`kubectl get ${def.names.plural}\`). ${def.description}`,
    '',
    'Each row is one field; `[]` stands for the items of a list and `<key>` for the values of a map. ' +
      'The same descriptions are in the CRD, so `kubectl explain ' +
      `${def.names.singular}.spec\` shows them too.`,
    '',
    '| field | type | required | default | validation | description |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  for (const row of fieldRows(def)) {
    if (row.path === 'apiVersion' || row.path === 'kind' || row.path === 'metadata') continue;
    lines.push(
      `| \`${row.path}\` | ${cell(row.type)} | ${row.required ? 'yes' : ''} | ${row.defaultValue ? `\`${cell(row.defaultValue)}\`` : ''} | ${cell(row.validation)} | ${cell(row.description)} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}
