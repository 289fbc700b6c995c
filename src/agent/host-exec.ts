/**
 * Runs a command on the host: chrooted into the root mount, in the package's copy dir, with its
 * output stamped and copied both to the agent's own stdout/stderr and to log files.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { constants } from 'node:os';
import { OutputStamper } from './output-stamper.js';

export interface HostCommand {
  chrootCommand: string;
  /** `local` runs without chroot. */
  rootMount: string;
  /** Working directory, a host path. */
  cwd: string;
  command: string[];
  /** Add the exec bits to command[0] first (steps yes, interrupts no). */
  makeExecutable: boolean;
  env: Record<string, string>;
  /** Log files for stdout and stderr; none when logs are off. */
  logs?: { stdout: string; stderr: string };
  /** Print the command line first (interrupts do). */
  echoCommand: boolean;
}

export interface Sinks {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

// Inside the chroot a small sh script does what needs the new root: change to the copy dir,
// mark the script executable, then replace itself with the command.
const ENTER_AND_EXEC = 'cd -- "$1" || exit 1; shift; exec "$@"';
const ENTER_CHMOD_AND_EXEC = 'cd -- "$1" || exit 1; shift; chmod ugo+x -- "$1" || exit 1; exec "$@"';

export function hostArgv(
  req: Pick<HostCommand, 'chrootCommand' | 'rootMount' | 'cwd' | 'command' | 'makeExecutable'>,
): string[] {
  const launcher = [
    '/bin/sh',
    '-c',
    req.makeExecutable ? ENTER_CHMOD_AND_EXEC : ENTER_AND_EXEC,
    'skyhook-agent',
    req.cwd,
    ...req.command,
  ];
  return req.rootMount === 'local' ? launcher : [req.chrootCommand, req.rootMount, ...launcher];
}

/** Resolves to the exit code, or minus the signal number when the command was killed (as Python reports it). */
export function runOnHost(req: HostCommand, sinks: Sinks): Promise<number> {
  const logFds = req.logs
    ? { stdout: openSync(req.logs.stdout, 'w'), stderr: openSync(req.logs.stderr, 'w') }
    : undefined;
  const writeOut = (text: string): void => {
    sinks.stdout(text);
    if (logFds) writeSync(logFds.stdout, text);
  };
  const writeErr = (text: string): void => {
    sinks.stderr(text);
    if (logFds) writeSync(logFds.stderr, text);
  };
  if (req.echoCommand) writeOut(`${req.command.join(' ')}\n`);

  const [file = '', ...args] = hostArgv(req);
  const child = spawn(file, args, { env: req.env, stdio: ['inherit', 'pipe', 'pipe'] });
  const outStamper = new OutputStamper('[out]');
  const errStamper = new OutputStamper('[err]');
  child.stdout.on('data', (chunk: Buffer) => writeOut(outStamper.stamp(chunk, new Date())));
  child.stderr.on('data', (chunk: Buffer) => writeErr(errStamper.stamp(chunk, new Date())));

  return new Promise((resolve) => {
    let finished = false;
    const finish = (code: number): void => {
      if (finished) return;
      finished = true;
      if (logFds) {
        closeSync(logFds.stdout);
        closeSync(logFds.stderr);
      }
      resolve(code);
    };
    child.on('error', (error) => {
      writeErr(`${error.message}\n`);
      finish(1);
    });
    // 'close' waits for the output pipes to drain, so the logs are complete when we resolve.
    child.on('close', (code, signal) => finish(signal ? -(constants.signals[signal] ?? 1) : (code ?? 1)));
  });
}
