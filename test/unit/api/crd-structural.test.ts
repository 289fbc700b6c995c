/**
 * Walks every generated openAPIV3Schema and checks the rules kube-apiserver applies to CRD schemas
 * (structural schema, forbidden keywords, what the root and anyOf branches may hold), so a schema
 * change that the API server would refuse fails here first, without a cluster.
 */
import { describe, expect, it } from '@jest/globals';
import { RESOURCE_DEFINITIONS } from '../../../src/api/definitions.js';
import { customResourceDefinition } from '../../../src/api/resource-definition.js';

type Schema = Record<string, unknown>;

/** The fields of apiextensions/v1 JSONSchemaProps: anything else is a typo or a library's private key. */
const KNOWN_KEYWORDS = new Set([
  'description',
  'type',
  'format',
  'title',
  'default',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'multipleOf',
  'enum',
  'maxProperties',
  'minProperties',
  'required',
  'items',
  'allOf',
  'oneOf',
  'anyOf',
  'not',
  'properties',
  'additionalProperties',
  'example',
  'externalDocs',
  'nullable',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
]);
const FORBIDDEN_ANYWHERE = [
  '$ref',
  '$schema',
  '$id',
  'id',
  'definitions',
  '$defs',
  'patternProperties',
  'dependencies',
  'additionalItems',
  'const',
];
const ROOT_ALLOWED = new Set([
  'description',
  'type',
  'format',
  'title',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'maxProperties',
  'minProperties',
  'required',
  'items',
  'properties',
  'example',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-validations',
]);
/** Inside anyOf/allOf/oneOf/not only value validations may appear (no type, default, description…). */
const JUNCTOR_FORBIDDEN = [
  'type',
  'default',
  'description',
  'nullable',
  'additionalProperties',
  'x-kubernetes-validations',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
];
const JUNCTORS = ['anyOf', 'allOf', 'oneOf'] as const;

const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function lint(schema: Schema, path: string, problems: string[], inJunctor = false): void {
  const problem = (message: string): void => void problems.push(`${path}: ${message}`);
  for (const key of Object.keys(schema)) if (!KNOWN_KEYWORDS.has(key)) problem(`unknown keyword ${key}`);
  for (const key of FORBIDDEN_ANYWHERE) if (key in schema) problem(`forbidden keyword ${key}`);
  if (schema['uniqueItems'] === true) problem('uniqueItems: true is forbidden');
  if (schema['type'] === 'null') problem('type null is forbidden (use nullable)');
  if (Array.isArray(schema['items'])) problem('items must be one schema, not a tuple');
  if (schema['additionalProperties'] === false) problem('additionalProperties: false is forbidden');
  const properties = schema['properties'];
  if (isSchema(properties) && Object.keys(properties).length > 0 && 'additionalProperties' in schema) {
    problem('additionalProperties next to properties');
  }
  if (Array.isArray(schema['required'])) {
    for (const name of schema['required'] as unknown[]) {
      if (!isSchema(properties) || !(String(name) in properties)) problem(`required ${String(name)} is not a property`);
    }
  }
  const intOrString = schema['x-kubernetes-int-or-string'] === true;
  const preserveUnknown = schema['x-kubernetes-preserve-unknown-fields'] === true;
  if (inJunctor) {
    for (const key of JUNCTOR_FORBIDDEN) if (key in schema) problem(`${key} inside anyOf/allOf/oneOf/not`);
  } else if (!('type' in schema) && !intOrString && !preserveUnknown) {
    problem('no type (structural schemas need one on every node)');
  }
  if (
    'default' in schema &&
    Array.isArray(schema['enum']) &&
    !(schema['enum'] as unknown[]).includes(schema['default'])
  ) {
    problem('default is not one of the enum values');
  }
  checkListMapKeys(schema, problem);
  checkCelRules(schema, problem);

  if (isSchema(properties))
    for (const [name, child] of Object.entries(properties)) lint(child as Schema, `${path}.${name}`, problems);
  if (isSchema(schema['items'])) lint(schema['items'], `${path}[]`, problems);
  if (isSchema(schema['additionalProperties'])) lint(schema['additionalProperties'], `${path}{}`, problems);
  for (const junctor of JUNCTORS) {
    const branches = schema[junctor];
    if (branches === undefined) continue;
    (branches as Schema[]).forEach((branch, index) => {
      // The one exception: int-or-string spells its two types as anyOf branches.
      const intOrStringBranch =
        intOrString &&
        junctor === 'anyOf' &&
        Object.keys(branch).length === 1 &&
        ['integer', 'string'].includes(String(branch['type']));
      if (!intOrStringBranch) lint(branch, `${path}.${junctor}[${index}]`, problems, true);
    });
  }
  if (isSchema(schema['not'])) lint(schema['not'], `${path}.not`, problems, true);
}

function checkListMapKeys(schema: Schema, problem: (message: string) => void): void {
  const keys = schema['x-kubernetes-list-map-keys'];
  if (keys === undefined) return;
  if (schema['x-kubernetes-list-type'] !== 'map') problem('list-map-keys without list-type map');
  const item = schema['items'] as Schema;
  for (const key of keys as string[]) {
    const required = ((item['required'] as string[] | undefined) ?? []).includes(key);
    const defaulted =
      isSchema(item['properties']) && isSchema(item['properties'][key]) && 'default' in item['properties'][key];
    if (!required && !defaulted) problem(`map key ${key} must be required or defaulted`);
  }
}

function checkCelRules(schema: Schema, problem: (message: string) => void): void {
  const rules = schema['x-kubernetes-validations'];
  if (rules === undefined) return;
  for (const rule of rules as Schema[]) {
    if (typeof rule['rule'] !== 'string' || rule['rule'] === '') problem('CEL rule without rule');
    // Our convention: every rule says what is wrong in words, naming the field.
    if (typeof rule['message'] !== 'string' && typeof rule['messageExpression'] !== 'string')
      problem(`CEL rule without message: ${String(rule['rule'])}`);
    if (rule['fieldPath'] !== undefined && !String(rule['fieldPath']).startsWith('.'))
      problem(`fieldPath must start with '.': ${String(rule['fieldPath'])}`);
  }
}

function rootSchema(crd: Record<string, unknown>): Schema {
  const versions = (crd['spec'] as { versions: { schema: { openAPIV3Schema: Schema } }[] }).versions;
  return versions[0]!.schema.openAPIV3Schema;
}

describe('CRD schemas are structural and use only what the API server allows', () => {
  it.each(RESOURCE_DEFINITIONS.map((def) => [def.names.kind, def] as const))('%s', (_kind, def) => {
    const root = rootSchema(customResourceDefinition(def));
    const problems: string[] = [];
    for (const key of Object.keys(root))
      if (!ROOT_ALLOWED.has(key)) problems.push(`(root): ${key} is not allowed at the root`);
    lint(root, '(root)', problems);
    expect(root['properties']).toMatchObject({ metadata: { type: 'object' } });
    expect(problems).toEqual([]);
  });

  it('the lint catches what it is meant to catch', () => {
    const problems: string[] = [];
    lint(
      {
        type: 'object',
        properties: {
          a: { type: 'object', properties: { x: { type: 'string' } }, additionalProperties: { type: 'string' } },
          b: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
          c: { type: 'object', patternProperties: { '.*': { type: 'string' } } },
          d: { type: 'string', const: 'x' },
          e: {
            type: 'array',
            items: { type: 'object', properties: { k: { type: 'string' } } },
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['k'],
          },
          f: { type: 'string', 'x-kubernetes-validations': [{ rule: 'true' }] },
        },
      },
      '(root)',
      problems,
    );
    expect(problems).toEqual([
      '(root).a: additionalProperties next to properties',
      '(root).b: no type (structural schemas need one on every node)',
      '(root).b.anyOf[0]: type inside anyOf/allOf/oneOf/not',
      '(root).b.anyOf[1]: type inside anyOf/allOf/oneOf/not',
      '(root).c: unknown keyword patternProperties',
      '(root).c: forbidden keyword patternProperties',
      '(root).d: unknown keyword const',
      '(root).d: forbidden keyword const',
      '(root).e: map key k must be required or defaulted',
      '(root).f: CEL rule without message: true',
    ]);
  });
});
