/**
 * Schema v1 of a package's config.json, the contract between package authors and the agent.
 * This module is the single source of the schema: the agent validates with it, and
 * `skyhook agent schema` prints it (kept in src/agent/schema/config-v1.schema.json for authors).
 * Like upstream's, it allows unknown keys everywhere.
 */
import { Type, type Static } from 'typebox';
import { STEP_MODES } from './modes.js';

/** Full SemVer 2.0 (no leading zeros, optional pre-release and build), as upstream's schema has it. */
export const SEMVER_PATTERN =
  '^(0|[1-9][0-9]*)[.](0|[1-9][0-9]*)[.](0|[1-9][0-9]*)(?:-((?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)(?:[.](?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:[+]([0-9a-zA-Z-]+(?:[.][0-9a-zA-Z-]+)*))?$';
export const STEP_NAME_PATTERN = '^[a-zA-Z0-9_\\-.]+$';

export const StepSchema = Type.Object({
  name: Type.String({ pattern: STEP_NAME_PATTERN }),
  path: Type.String({ description: 'script path relative to skyhook_dir' }),
  arguments: Type.Array(Type.String(), {
    minItems: 0,
    description: '"env:NAME" is replaced by the environment variable NAME',
  }),
  returncodes: Type.Array(Type.Integer(), { minItems: 1, description: 'exit codes that mean success' }),
  on_host: Type.Boolean({ description: 'accepted but has no effect: every step runs chrooted on the host' }),
  env: Type.Optional(Type.Record(Type.String(), Type.String())),
  idempotence: Type.Boolean({
    description:
      'true: the step manages its own idempotence and always runs; false: the agent skips it once it has succeeded',
  }),
  upgrade_step: Type.Boolean({
    description: 'true: gets <previous> <current> versions as arguments; only in upgrade modes',
  }),
});
export type StepConfig = Static<typeof StepSchema>;

/** Mode lists refer to the one step definition instead of repeating it ten times. */
const StepList = Type.Unsafe<StepConfig[]>({ type: 'array', items: { $ref: '#/$defs/step' } });

const ModesSchema = Type.Object(Object.fromEntries(STEP_MODES.map((mode) => [mode, Type.Optional(StepList)])));

export const PackageConfigSchema = Type.Object(
  {
    schema_version: Type.String(),
    package_name: Type.String(),
    package_version: Type.String({ pattern: SEMVER_PATTERN }),
    expected_config_files: Type.Array(Type.String(), {
      minItems: 0,
      description: 'file names required in SKYHOOK_DIR/configmaps',
    }),
    modes: ModesSchema,
  },
  {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'v1/skyhook-agent-schema.json',
    title: 'Skyhook package config.json, schema v1',
    $defs: { step: StepSchema },
  },
);

/** The shape of a config.json that passed the schema; mode lists are keyed by mode name. */
export type PackageConfig = Omit<Static<typeof PackageConfigSchema>, 'modes'> & {
  modes: Partial<Record<string, StepConfig[]>>;
};

/** The schema as plain JSON, the way it is published for package authors. */
export function packageConfigSchemaJson(): string {
  return `${JSON.stringify(PackageConfigSchema, null, 2)}\n`;
}
