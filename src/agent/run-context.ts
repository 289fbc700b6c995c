/** What every part of one agent run needs to know. */
import type { HostLayout } from './host-paths.js';
import type { Sinks } from './host-exec.js';
import type { AgentSettings } from './settings.js';

export interface RunContext {
  settings: AgentSettings;
  layout: HostLayout;
  rootMount: string;
  /** The package's host path as the steps see it. */
  copyDir: string;
  /** The agent's environment; steps inherit it. */
  env: Readonly<Record<string, string | undefined>>;
  io: Sinks;
  /** A line on stdout, the way upstream prints its progress. */
  print: (line: string) => void;
  /** Python logging's default format, `WARNING:root:<message>` on stderr. */
  warn: (message: string) => void;
  /** SIGTERM arrived: finish the current step, start no other. */
  stopRequested: () => boolean;
}

export function runContext(base: Omit<RunContext, 'print' | 'warn'>): RunContext {
  return {
    ...base,
    print: (line) => base.io.stdout(`${line}\n`),
    warn: (message) => base.io.stderr(`WARNING:root:${message}\n`),
  };
}
