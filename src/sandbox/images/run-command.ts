/**
 * Runs the external tools of the image build (buildah, mmdebstrap, gcc, tar, npm) as child
 * processes. Output is captured, not streamed, so the build's own log stays readable; a failure
 * throws an error that names the command and ends with the tail of its output, which is where
 * buildah and apt put the reason.
 */
import { spawn } from 'node:child_process';

export interface CommandOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Written to the child's stdin, then closed. */
  input?: string;
}

const OUTPUT_TAIL_CHARS = 4000;

export class CommandError extends Error {
  readonly command: string;
  readonly exitCode: number | null;
  readonly output: string;

  constructor(command: string, exitCode: number | null, output: string) {
    super(`\`${command}\` failed (exit ${exitCode ?? 'by signal'}):\n${output.slice(-OUTPUT_TAIL_CHARS).trimEnd()}`);
    this.name = 'CommandError';
    this.command = command;
    this.exitCode = exitCode;
    this.output = output;
  }
}

function quoteForDisplay(argv: readonly string[]): string {
  return argv.map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** Runs `file args…`; resolves with stdout, rejects with CommandError (stdout + stderr tail). */
export function runCommand(file: string, args: readonly string[], options: CommandOptions = {}): Promise<string> {
  const display = quoteForDisplay([file, ...args]);
  return new Promise((resolveRun, rejectRun) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const stdout: Buffer[] = [];
    const combined: Buffer[] = [];
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout.push(chunk);
      combined.push(chunk);
    });
    child.stderr!.on('data', (chunk: Buffer) => combined.push(chunk));
    if (options.input !== undefined) child.stdin!.end(options.input);
    child.on('error', (error) => rejectRun(new Error(`could not start \`${display}\`: ${error.message}`)));
    child.on('close', (code) => {
      if (code === 0) resolveRun(Buffer.concat(stdout).toString('utf8'));
      else rejectRun(new CommandError(display, code, Buffer.concat(combined).toString('utf8')));
    });
  });
}
