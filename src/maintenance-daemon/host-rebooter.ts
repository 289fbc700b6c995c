/**
 * The real reboot of the maintenance daemon (`--reboot-method host`): the same host command a Skyhook
 * `reboot` interrupt runs (SKYHOOK_AGENT_REBOOT_COMMAND, default `reboot`, through
 * templates/interrupt-plan.ts:rebootPlan) entered into the host the same way the interrupt's reboot
 * pod enters it (`inHostNamespaces`: nsenter into PID 1's namespaces; the DaemonSet has hostPID and
 * is privileged for this). One code path for every reboot the operator causes, so what works for
 * interrupts on a node works for maintenance there.
 *
 * `reboot()` resolves when the command returns (systemd's `reboot` returns at once and the host goes
 * down after); the daemon then waits for the new boot ID. On a host where the command takes the
 * daemon down with it (reboot(2) kills every process of the PID namespace), the daemon resumes from
 * its host state after the boot.
 */
import { execFile } from 'node:child_process';
import { readSettings, type InterruptCommands } from '../agent/settings.js';
import { inHostNamespaces, rebootPlan } from '../templates/interrupt-plan.js';

/** A reboot command that has not returned after this long has failed (the daemon retries later). */
const HOST_COMMAND_TIMEOUT_MS = 5 * 60_000;

/** Runs one command (argv) to completion; rejects on a non-zero exit, naming it and its output. */
export type CommandRunner = (argv: readonly string[]) => Promise<void>;

/** The default runner; `env` replaces this process's environment (tests put a stub nsenter first on PATH). */
export const runCommand = (argv: readonly string[], env?: NodeJS.ProcessEnv): Promise<void> => {
  const [file, ...args] = argv;
  if (!file) return Promise.reject(new Error('empty command'));
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: HOST_COMMAND_TIMEOUT_MS, ...(env ? { env } : {}) }, (error, stdout, stderr) => {
      if (!error) return resolve();
      const output = `${stderr}${stdout}`.trim().slice(-1000);
      reject(new Error(`${argv.join(' ')} failed: ${error.message}${output ? `: ${output}` : ''}`));
    });
  });
};

export interface HostRebooterOptions {
  /** Default: the interrupt commands of this process's environment, as the operator reads them. */
  commands?: InterruptCommands;
  run?: CommandRunner;
}

/** The argv lists a host reboot runs, in order (pure). */
export function hostRebootCommands(commands: InterruptCommands): string[][] {
  return rebootPlan(commands).commands.map((command) => inHostNamespaces(command));
}

export function hostRebooter(options: HostRebooterOptions = {}): { reboot(): Promise<void> } {
  const argvs = hostRebootCommands(options.commands ?? readSettings(process.env).interruptCommands);
  const run = options.run ?? ((argv: readonly string[]) => runCommand(argv));
  return {
    reboot: async () => {
      for (const argv of argvs) await run(argv);
    },
  };
}
