/** Runs one step of a package: arguments, environment, log files, exit code. */
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PackageConfig, StepConfig } from './config-schema.js';
import { logFilePath, logTimestamp, stepLogName } from './host-paths.js';
import { runOnHost } from './host-exec.js';
import { logsToReap } from './log-retention.js';
import { removeFiles } from './host-state.js';
import type { RunContext } from './run-context.js';
import { stepEnvironment, stepScriptPath, substituteEnvArguments } from './step-command.js';

/** Arguments and env a mode adds to a step (the versions in upgrade modes). */
export interface StepExtras {
  arguments: string[];
  env: Record<string, string>;
}

export const NO_EXTRAS: StepExtras = { arguments: [], env: {} };

/** Resolves to true when the step's exit code is one of its `returncodes`. */
export async function runStep(
  ctx: RunContext,
  config: PackageConfig,
  step: StepConfig,
  extras: StepExtras,
): Promise<boolean> {
  const substituted = substituteEnvArguments(step, ctx.env);
  if (!substituted.ok) {
    for (const message of substituted.errors) ctx.print(message);
    return false;
  }
  const args = [...substituted.arguments, ...extras.arguments];

  await sleep(ctx.settings.stepDelayMs);
  const logPath = ctx.settings.writeLogs ? await unusedLogPath(ctx, config, step.path) : undefined;
  if (logPath) mkdirSync(dirname(logPath), { recursive: true });

  const returnCode = await runOnHost(
    {
      chrootCommand: ctx.settings.chrootCommand,
      rootMount: ctx.rootMount,
      cwd: ctx.copyDir,
      command: [stepScriptPath(ctx.copyDir, step.path), ...args],
      makeExecutable: true,
      env: stepEnvironment(ctx.env, { ...(step.env ?? {}), ...extras.env }, ctx.copyDir),
      ...(logPath ? { logs: { stdout: logPath, stderr: `${logPath}.err` } } : {}),
      echoCommand: false,
    },
    ctx.io,
  );
  if (logPath) reapOldLogs(logPath, step.path);

  if (!step.returncodes.includes(returnCode)) {
    ctx.print(`FAILED: ${step.path} ${args.join(' ')} ${returnCode}`);
    return false;
  }
  ctx.print(`SUCEEDED: ${step.path} ${args.join(' ')}`);
  return true;
}

/**
 * The step's log path for the current second. Log names have one-second resolution, so when this
 * second's name is taken (the same step ran moments ago, in this process or an earlier stage's),
 * it waits for the next second: two runs never share a log, and no run waits when none is needed
 * (upstream pauses 1 s before every step instead, ~1 s of every stage container).
 */
async function unusedLogPath(ctx: RunContext, config: PackageConfig, stepPath: string): Promise<string> {
  for (;;) {
    const now = new Date();
    const path = logFilePath(
      ctx.layout,
      config.package_name,
      config.package_version,
      stepLogName(stepPath),
      logTimestamp(now),
    );
    if (!existsSync(path) && !existsSync(`${path}.err`)) return path;
    await sleep(1000 - now.getUTCMilliseconds());
  }
}

function reapOldLogs(logPath: string, stepPath: string): void {
  const dir = dirname(logPath);
  const entries = readdirSync(dir).map((name) => ({ name, mtimeMs: statSync(join(dir, name)).mtimeMs }));
  removeFiles(logsToReap(entries, basename(stepPath)).map((name) => join(dir, name)));
}
