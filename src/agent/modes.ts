/**
 * The agent's modes and how they relate. The names are upstream's and appear in config.json keys,
 * CLI arguments and flag file names, so they must not change.
 */
export const ACTION_MODES = ['uninstall', 'upgrade', 'apply', 'config', 'post-interrupt'] as const;
export const CHECK_MODES = [
  'uninstall-check',
  'upgrade-check',
  'apply-check',
  'config-check',
  'post-interrupt-check',
] as const;

export type ActionMode = (typeof ACTION_MODES)[number];
export type CheckMode = (typeof CHECK_MODES)[number];
/** A mode that has steps in config.json. */
export type StepMode = ActionMode | CheckMode;
/** Every mode the CLI accepts; `interrupt` has no steps. */
export type Mode = StepMode | 'interrupt';

/** Upstream's enum order, used when listing the modes in messages. */
export const ALL_MODES: readonly Mode[] = [
  'uninstall',
  'uninstall-check',
  'upgrade',
  'upgrade-check',
  'apply',
  'apply-check',
  'config',
  'config-check',
  'interrupt',
  'post-interrupt',
  'post-interrupt-check',
];

export function isMode(value: string): value is Mode {
  return (ALL_MODES as readonly string[]).includes(value);
}

export function isStepMode(value: string): value is StepMode {
  return isActionMode(value) || isCheckMode(value);
}

export function isActionMode(value: string): value is ActionMode {
  return (ACTION_MODES as readonly string[]).includes(value);
}

export function isCheckMode(value: string): value is CheckMode {
  return (CHECK_MODES as readonly string[]).includes(value);
}

export function checkModeOf(mode: ActionMode): CheckMode {
  return `${mode}-check`;
}

/** Modes in which upgrade steps may appear and CURRENT_VERSION/PREVIOUS_VERSION are set. */
export function isUpgradeMode(mode: StepMode): boolean {
  return mode === 'upgrade' || mode === 'upgrade-check';
}

/** Uninstall modes skip root_dir copying and expected_config_files: the package is going away. */
export function isUninstallMode(mode: StepMode): boolean {
  return mode === 'uninstall' || mode === 'uninstall-check';
}

/** Modes that always re-run their steps, whatever flag exists. */
export function ignoresStepFlags(mode: StepMode): boolean {
  return mode === 'config' || mode === 'uninstall' || mode === 'upgrade';
}

/** Check modes whose success records the package version in the history file. */
export function recordsHistory(mode: StepMode): boolean {
  return mode === 'apply-check' || mode === 'upgrade-check' || mode === 'uninstall-check';
}

/** The mode keys schema v1 lists under `modes`, each action mode followed by its check. */
export const STEP_MODES: readonly StepMode[] = ACTION_MODES.flatMap((mode) => [mode, checkModeOf(mode)]);
