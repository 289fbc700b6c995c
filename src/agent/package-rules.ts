/**
 * The load-time rules upstream applies on top of the schema. Pure: the file system is reached only
 * through the `stepFileExists` callback, so the rules are tested without a package on disk.
 * Errors abort a run (and fail `validate`); warnings are printed and nothing more.
 */
import type { PackageConfig, StepConfig } from './config-schema.js';
import { ACTION_MODES, checkModeOf, isStepMode, isUpgradeMode, STEP_MODES, type StepMode } from './modes.js';

export interface RuleFindings {
  errors: string[];
  warnings: string[];
}

/** Step keys the upstream loader accepts; any other key crashes it. */
const UPSTREAM_STEP_KEYS = new Set([
  'name',
  'path',
  'arguments',
  'returncodes',
  'on_host',
  'env',
  'idempotence',
  'upgrade_step',
  'requires_interrupt',
]);

export function checkPackageRules(config: PackageConfig, stepFileExists: (path: string) => boolean): RuleFindings {
  const errors: string[] = [];
  const warnings: string[] = [];
  const modeKeys = Object.keys(config.modes);

  for (const key of modeKeys) {
    // `interrupt` is a valid mode name upstream, and its steps are ignored.
    if (!isStepMode(key) && key !== 'interrupt') {
      errors.push(`$.modes: unknown mode '${key}' (known: ${STEP_MODES.join(', ')})`);
    }
  }

  const stepsOf = (mode: StepMode): StepConfig[] => config.modes[mode] ?? [];
  if (STEP_MODES.every((mode) => stepsOf(mode).length === 0)) errors.push('$.modes: There are no defined steps.');
  if (!ACTION_MODES.some((mode) => modeKeys.includes(mode))) {
    errors.push(
      `$.modes: There are only check modes defined. You must define at least one of ${ACTION_MODES.join(', ')}`,
    );
  }
  for (const mode of ACTION_MODES) {
    if (stepsOf(mode).length > 0 && stepsOf(checkModeOf(mode)).length === 0) {
      errors.push(
        `$.modes: There are no checks for any of the ${mode} steps: '${checkModeOf(mode)}' needs at least one step.`,
      );
    }
  }

  for (const mode of STEP_MODES) {
    stepsOf(mode).forEach((step, index) => {
      const at = `$.modes[${JSON.stringify(mode)}][${index}]`;
      if (step.upgrade_step && !isUpgradeMode(mode)) {
        errors.push(
          `${at}: upgrade step ${step.path} defined in the ${mode} mode but can only be defined in the upgrade or upgrade-check modes.`,
        );
      }
      if (step.upgrade_step && step.arguments.length > 0) {
        errors.push(
          `${at}.arguments: upgrade step ${step.name} can not have any arguments (it gets <previous> <current> versions), but found: ${step.arguments.join(' ')}`,
        );
      }
      if (!stepFileExists(step.path)) errors.push(`${at}.path: step file '${step.path}' does not exist in skyhook_dir`);
      for (const key of Object.keys(step)) {
        if (!UPSTREAM_STEP_KEYS.has(key))
          warnings.push(`${at}: unknown step key '${key}' (the upstream agent refuses it)`);
      }
    });
  }

  warnings.push(...missingCheckScriptWarnings(config));
  return { errors, warnings };
}

/** Upstream's convention: an action script `X.ext` has a check script `X_check.ext`. */
export function expectedCheckPath(actionPath: string): string {
  const dot = actionPath.lastIndexOf('.');
  return dot < 0 ? `${actionPath}_check` : `${actionPath.slice(0, dot)}_check.${actionPath.slice(dot + 1)}`;
}

function missingCheckScriptWarnings(config: PackageConfig): string[] {
  const checkPaths = new Set(
    STEP_MODES.filter((m) => m.endsWith('-check')).flatMap((m) => (config.modes[m] ?? []).map((s) => s.path)),
  );
  const expected = new Set(ACTION_MODES.flatMap((m) => (config.modes[m] ?? []).map((s) => expectedCheckPath(s.path))));
  return [...expected]
    .filter((path) => !checkPaths.has(path))
    .map((path) => `${path} doesn't exist. Checks ensure that all tasks in the step will complete.`);
}
