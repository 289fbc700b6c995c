/**
 * Per-step flag files: their names, their content and the rule that decides whether a step that
 * already succeeded is skipped. Pure.
 */
import type { StepConfig } from './config-schema.js';
import { ignoresStepFlags, type StepMode } from './modes.js';
import { packageFlagsDir, type HostLayout } from './host-paths.js';
import { pyBool, pyLocalIsoformat, pyReprList } from './python-format.js';

/**
 * base64 of `<repr(arguments)>_<repr(returncodes)>`, from the arguments as written in config.json
 * (before `env:` substitution), so the name stays the same whatever the environment holds.
 */
export function stepFlagMarker(step: Pick<StepConfig, 'arguments' | 'returncodes'>): string {
  return Buffer.from(`${pyReprList(step.arguments)}_${pyReprList(step.returncodes)}`, 'utf8').toString('base64');
}

export function stepFlagPath(
  layout: HostLayout,
  pkg: string,
  version: string,
  step: Pick<StepConfig, 'path' | 'arguments' | 'returncodes'>,
): string {
  return `${packageFlagsDir(layout, pkg, version)}/${step.path}_${stepFlagMarker(step)}`;
}

export function stepFlagContent(lastRun: Date, alwaysRuns: boolean): string {
  return `last_run: ${pyLocalIsoformat(lastRun)}\nstep_always_runs: ${pyBool(alwaysRuns)}`;
}

export type FlagDecision = { skip: true; message: string } | { skip: false; message?: string };

/**
 * A step is skipped only when its flag exists, OVERLAY_ALWAYS_RUN_STEP is off, the mode honours
 * flags (not config, uninstall, upgrade) and the step leaves idempotence to the agent
 * (`idempotence: false`). The messages are upstream's.
 */
export function decideStepFlag(args: {
  flagExists: boolean;
  flagPath: string;
  stepPath: string;
  alwaysRunStep: boolean;
  mode: StepMode;
  stepManagesItself: boolean;
}): FlagDecision {
  if (!args.flagExists) return { skip: false };
  if (args.alwaysRunStep) {
    return {
      skip: false,
      message: `WARNING: ${args.flagPath} exists for ${args.stepPath} but OVERLAY_ALWAYS_RUN_STEP flag is set so running anyway.`,
    };
  }
  if (ignoresStepFlags(args.mode)) {
    return {
      skip: false,
      message: "Flag exists but CONFIG, UNINSTALL, and UPGRADE mode don't support idempotence so running step anyway.",
    };
  }
  if (args.stepManagesItself)
    return { skip: false, message: 'Flag exists but idempotence is Idempotence.Disabled so running step.' };
  return { skip: true, message: `Skipping ${args.stepPath} because ${args.flagPath} exists.` };
}
