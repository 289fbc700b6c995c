/**
 * The CRD files under config/crd/ as the schemas generate them: `npm run gen:crds` writes them and a
 * unit test compares them with the checked-in copies.
 */
import { stringify } from 'yaml';
import { RESOURCE_DEFINITIONS } from './definitions.js';
import { API_GROUP } from './names.js';
import { customResourceDefinition, type ResourceDefinition } from './resource-definition.js';

const HEADER = '# Generated from src/api by `npm run gen:crds`; do not edit.\n';

export function crdFileName(def: ResourceDefinition): string {
  return `${API_GROUP}_${def.names.plural}.yaml`;
}

export function renderCrdYaml(def: ResourceDefinition): string {
  // lineWidth 0: never fold long CEL rules or patterns, so diffs stay readable.
  return HEADER + stringify(customResourceDefinition(def), { lineWidth: 0 });
}

/** File name (relative to config/crd/) → content, for every kind. */
export function generateCrdFiles(): Map<string, string> {
  return new Map(RESOURCE_DEFINITIONS.map((def) => [crdFileName(def), renderCrdYaml(def)]));
}
