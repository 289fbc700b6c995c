/** Reads a package directory's config.json and applies the schema and the load-time rules. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PackageConfig } from './config-schema.js';
import { checkConfigSchema } from './schema-check.js';
import { checkPackageRules } from './package-rules.js';

export interface PackageInspection {
  /** Present when config.json parsed and matched the schema. */
  config?: PackageConfig;
  errors: string[];
  warnings: string[];
}

/** Every problem of the package at `packageDir` (holding config.json and skyhook_dir/), none thrown. */
export function inspectPackage(packageDir: string, configPath = join(packageDir, 'config.json')): PackageInspection {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(configPath, 'utf8'));
  } catch (error) {
    return { errors: [`${configPath}: ${error instanceof Error ? error.message : String(error)}`], warnings: [] };
  }
  const schema = checkConfigSchema(data);
  if (!schema.ok) return { errors: schema.problems, warnings: [] };
  const stepDir = join(packageDir, 'skyhook_dir');
  const rules = checkPackageRules(schema.config, (path) => existsSync(join(stepDir, path)));
  return { config: schema.config, ...rules };
}

/** What the package's author does about it; the last line of the agent's log, so a log tail keeps it. */
export const PACKAGE_FIX_HINT =
  "fix the package's config.json (`skyhook agent validate <package dir>` lists every problem) and publish its image again; the failed stage is retried";

export class PackageInvalidError extends Error {
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(`invalid package:\n  ${problems.join('\n  ')}\n${PACKAGE_FIX_HINT}`);
    this.problems = problems;
  }
}

/** For a run: the config, or a PackageInvalidError listing every problem. Warnings go to `warn`. */
export function loadPackage(packageDir: string, warn: (message: string) => void): PackageConfig {
  const inspection = inspectPackage(packageDir);
  if (inspection.errors.length > 0 || !inspection.config) throw new PackageInvalidError(inspection.errors);
  inspection.warnings.forEach(warn);
  return inspection.config;
}
