/**
 * Interrupt mode: runs the commands of an interrupt on the host, each at most once per
 * SKYHOOK_RESOURCE_ID, recorded by `<type>_<i>.complete` flags written before the command runs.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { interruptFlagDir, interruptFlagPath, interruptLogName, logFilePath, logTimestamp } from './host-paths.js';
import { removeFiles, writeFileMakingDirs } from './host-state.js';
import { runOnHost } from './host-exec.js';
import { decodeInterrupt, interruptId, keepsFlagAfterFailure } from './interrupts.js';
import { pyEpochSeconds, pyReprList } from './python-format.js';
import type { RunContext } from './run-context.js';
import { parseResourceId } from './settings.js';
import { hostEnvironment } from './step-command.js';

/** Resolves to true when every command ran (or had already run). */
export async function runInterrupt(ctx: RunContext, interruptData: string | undefined): Promise<boolean> {
  const resourceId = ctx.settings.resourceId;
  // Interrupts have no config.json: the package name and version in log paths come from the id.
  const resource = parseResourceId(resourceId);
  const plan = decodeInterrupt(interruptData, ctx.settings.interruptCommands);
  mkdirSync(interruptFlagDir(ctx.layout, resourceId), { recursive: true });

  if (plan.type === 'no_op') {
    writeFileMakingDirs(interruptFlagPath(ctx.layout, resourceId, 'no_op'), pyEpochSeconds(new Date()));
    return true;
  }

  for (const [index, command] of plan.commands.entries()) {
    const id = interruptId(plan.type, index);
    const flag = interruptFlagPath(ctx.layout, resourceId, id);
    if (existsSync(flag)) {
      ctx.print(`Skipping interrupt ${id} because it was already run for ${resourceId}`);
      continue;
    }
    // Written first: a reboot may never let us write it afterwards.
    writeFileMakingDirs(flag, pyEpochSeconds(new Date()));

    const logPath = logFilePath(
      ctx.layout,
      resource.packageName,
      resource.packageVersion,
      interruptLogName(id),
      logTimestamp(new Date()),
    );
    mkdirSync(dirname(logPath), { recursive: true });
    const returnCode = await runOnHost(
      {
        chrootCommand: ctx.settings.chrootCommand,
        rootMount: ctx.rootMount,
        cwd: ctx.copyDir,
        command,
        makeExecutable: false,
        env: hostEnvironment(ctx.env),
        logs: { stdout: logPath, stderr: `${logPath}.err` },
        echoCommand: true,
      },
      ctx.io,
    );
    if (returnCode !== 0) {
      ctx.print(`INTERRUPT FAILED: ${pyReprList(command)} return_code: ${returnCode}`);
      // Without its flag the failed command runs again next time instead of looking done.
      if (!keepsFlagAfterFailure(plan.type, returnCode)) removeFiles([flag]);
      return false;
    }
  }
  return true;
}
