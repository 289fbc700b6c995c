/**
 * Runs the steps of one mode. Action modes stop at the first failure and flag each success;
 * check modes run every step, then record check_results and `<mode>_ALL_CHECKED`. Successful
 * apply-check, upgrade-check and uninstall-check update the history.
 */
import { existsSync } from 'node:fs';
import type { PackageConfig, StepConfig } from './config-schema.js';
import { UNINSTALLED, installedVersion } from './history.js';
import {
  markAllChecked,
  markStarted,
  readHistory,
  recordHistory,
  removeFiles,
  writeCheckResults,
  writeFileMakingDirs,
} from './host-state.js';
import { isCheckMode, isUpgradeMode, recordsHistory, STEP_MODES, type StepMode } from './modes.js';
import type { RunContext } from './run-context.js';
import { decideStepFlag, stepFlagContent, stepFlagPath } from './step-flags.js';
import { stepBanner } from './step-command.js';
import { NO_EXTRAS, runStep, type StepExtras } from './step-runner.js';

/** Resolves to true when the mode succeeded. */
export async function runStepMode(ctx: RunContext, mode: StepMode, config: PackageConfig): Promise<boolean> {
  markStarted(ctx.layout);
  const steps = config.modes[mode] ?? [];
  if (steps.length === 0) ctx.warn(` There are no ${mode} steps defined. This will be ran as a no-op.`);

  const results: { path: string; failed: boolean }[] = [];
  for (const step of steps) {
    if (ctx.stopRequested()) {
      ctx.print('SIGTERM received, stopping step execution');
      return false;
    }
    const flagPath = stepFlagPath(ctx.layout, config.package_name, config.package_version, step);
    const extras = isUpgradeMode(mode) ? upgradeExtras(ctx, config, step) : NO_EXTRAS;

    if (isCheckMode(mode)) {
      ctx.print(stepBanner(mode, step, [...step.arguments, ...extras.arguments]));
      results.push({ path: step.path, failed: !(await runStep(ctx, config, step, extras)) });
      continue;
    }
    const decision = decideStepFlag({
      flagExists: existsSync(flagPath),
      flagPath,
      stepPath: step.path,
      alwaysRunStep: ctx.settings.alwaysRunStep,
      mode,
      stepManagesItself: step.idempotence,
    });
    if (decision.message) ctx.print(decision.message);
    if (decision.skip) continue;
    ctx.print(stepBanner(mode, step, [...step.arguments, ...extras.arguments]));
    if (!(await runStep(ctx, config, step, extras))) return false;
    writeFileMakingDirs(flagPath, stepFlagContent(new Date(), step.idempotence));
  }

  if (isCheckMode(mode) && steps.length > 0) {
    writeCheckResults(ctx.layout, results);
    if (results.some((r) => r.failed)) return false;
    markAllChecked(ctx.layout, mode);
  }

  if (recordsHistory(mode)) {
    const uninstalled = mode === 'uninstall-check';
    recordHistory(ctx.layout, config.package_name, uninstalled ? UNINSTALLED : config.package_version, ctx.print);
    // A removed package leaves no flags behind, so a reinstall runs every step again.
    if (uninstalled) removeFiles(allStepFlags(ctx, config));
  }
  return true;
}

/** Upgrade steps learn the versions from the history: env for all, arguments for upgrade_step ones. */
function upgradeExtras(ctx: RunContext, config: PackageConfig, step: StepConfig): StepExtras {
  const previous = installedVersion(readHistory(ctx.layout, config.package_name, ctx.print));
  const current = config.package_version;
  return {
    arguments: step.upgrade_step ? [previous, current] : [],
    env: { CURRENT_VERSION: current, PREVIOUS_VERSION: previous },
  };
}

function allStepFlags(ctx: RunContext, config: PackageConfig): string[] {
  return STEP_MODES.flatMap((mode) =>
    (config.modes[mode] ?? []).map((step) =>
      stepFlagPath(ctx.layout, config.package_name, config.package_version, step),
    ),
  );
}
