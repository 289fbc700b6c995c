/**
 * One agent run: `<mode> <rootMount> <copyDir> [interruptBase64]`. Exit codes are upstream's:
 * 0 for success (and for modes this agent does not know), 1 for any failure.
 */
import { ALL_MODES, isMode, isUninstallMode } from './modes.js';
import { parseAgentArgs } from './args.js';
import { startupBanner } from './banner.js';
import type { Sinks } from './host-exec.js';
import { onHost } from './host-paths.js';
import { copyResolvConf, copyRootDir, ensurePackageOnHost, requireExpectedConfigFiles } from './host-setup.js';
import { runInterrupt } from './interrupt-runner.js';
import { runStepMode } from './mode-runner.js';
import { loadPackage } from './package-loader.js';
import { runContext } from './run-context.js';
import { readSettings } from './settings.js';

type Env = Readonly<Record<string, string | undefined>>;

export const processSinks: Sinks = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
};

export async function runAgent(
  argv: readonly string[],
  env: Env = process.env,
  io: Sinks = processSinks,
): Promise<number> {
  // The agent is stopped with SIGTERM (a pod deletion, a reboot): finish the running step, start no other.
  let sigterm = false;
  const onSigterm = (): void => {
    sigterm = true;
  };
  process.on('SIGTERM', onSigterm);
  try {
    return (await runOrThrow(argv, env, io, () => sigterm)) ? 0 : 1;
  } catch (error) {
    io.stderr(`ERROR:root:${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    process.off('SIGTERM', onSigterm);
  }
}

async function runOrThrow(
  argv: readonly string[],
  env: Env,
  io: Sinks,
  stopRequested: () => boolean,
): Promise<boolean> {
  const invocation = parseAgentArgs(argv);
  const settings = readSettings(env);
  if (settings.copyResolv) copyResolvConf(invocation.rootMount);
  io.stdout(startupBanner(invocation, settings));

  const ctx = runContext({
    settings,
    layout: { rootMount: invocation.rootMount, stateDir: settings.stateDir, logDir: settings.logDir },
    rootMount: invocation.rootMount,
    copyDir: invocation.copyDir,
    env,
    io,
    stopRequested,
  });
  const { mode } = invocation;
  if (!isMode(mode)) {
    ctx.warn(`This version of the Agent doesn't support the ${mode} mode. Options are: ${ALL_MODES.join(',')}.`);
    return true;
  }
  if (mode === 'interrupt') return runInterrupt(ctx, invocation.interruptData);

  const packageDir = onHost(invocation, invocation.copyDir);
  ensurePackageOnHost(packageDir, settings.dataDir);
  // Upstream's warnings start with a space after the logger prefix.
  const config = loadPackage(packageDir, (warning) => ctx.warn(` ${warning}`));
  // Uninstall must work even when the files a package needs to install are gone.
  if (!isUninstallMode(mode)) {
    copyRootDir(packageDir, invocation.rootMount);
    requireExpectedConfigFiles(packageDir, config.expected_config_files);
  }
  return runStepMode(ctx, mode, config);
}
