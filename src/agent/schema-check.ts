/**
 * Checks a parsed config.json against schema v1 and reports every violation with the JSON path
 * of the offending value, so `validate` can list them all at once.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject } from 'ajv';
import { PackageConfigSchema, type PackageConfig } from './config-schema.js';

export const SUPPORTED_SCHEMA_VERSIONS = ['v1'] as const;

const ajv = new Ajv2020({ allErrors: true, strict: false });
const validateV1 = ajv.compile<PackageConfig>(PackageConfigSchema);

export type SchemaCheck = { ok: true; config: PackageConfig } | { ok: false; problems: string[] };

export function checkConfigSchema(data: unknown): SchemaCheck {
  const version =
    typeof data === 'object' && data !== null ? (data as Record<string, unknown>)['schema_version'] : undefined;
  // Upstream picks the schema by version before validating; an unknown one is fatal on its own.
  if (typeof version === 'string' && !(SUPPORTED_SCHEMA_VERSIONS as readonly string[]).includes(version)) {
    return {
      ok: false,
      problems: [
        `$.schema_version: Unknown skyhook-agent schema version: ${version} (supported: ${SUPPORTED_SCHEMA_VERSIONS.join(', ')})`,
      ],
    };
  }
  if (validateV1(data)) return { ok: true, config: data };
  return { ok: false, problems: (validateV1.errors ?? []).map(describeSchemaError) };
}

function describeSchemaError(error: ErrorObject): string {
  const path = jsonPath(error.instancePath);
  if (error.keyword === 'required') {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    return `${path}: missing required property '${missing}'`;
  }
  return `${path}: ${error.message ?? error.keyword}`;
}

/** `/modes/apply/0/name` becomes `$.modes.apply[0].name`, the form people read. */
export function jsonPath(pointer: string): string {
  const segments = pointer
    .split('/')
    .slice(1)
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
  return segments.reduce((acc, segment) => {
    if (/^\d+$/.test(segment)) return `${acc}[${segment}]`;
    if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(segment)) return `${acc}.${segment}`;
    return `${acc}[${JSON.stringify(segment)}]`;
  }, '$');
}
