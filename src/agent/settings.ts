/**
 * The agent's environment knobs. Upstream's names and defaults first; then ours, which exist so
 * the agent can be pointed at harmless commands in tests and at other tools on unusual hosts.
 */

export interface InterruptCommands {
  /** node_restart */
  reboot: string[];
  /** service_restart, before the per-service restarts */
  daemonReload: string[];
  /** service_restart, once per service with the service name appended */
  restartService: string[];
  /** restart_all_services (upstream: reloads sysctl settings only) */
  restartAllServices: string[];
}

export interface AgentSettings {
  resourceId: string;
  dataDir: string;
  stateDir: string;
  logDir: string;
  writeLogs: boolean;
  bufferLimit: number;
  copyResolv: boolean;
  alwaysRunStep: boolean;
  chrootCommand: string;
  stepDelayMs: number;
  interruptCommands: InterruptCommands;
}

/** Every variable the agent reads, with its default and meaning (printed by `skyhook agent --help`). */
export const AGENT_ENV_DOC: ReadonlyArray<readonly [name: string, defaultValue: string, meaning: string]> = [
  [
    'SKYHOOK_RESOURCE_ID',
    '',
    '<skyhook>-<uid>-<generation>_<package>_<version>; names the interrupt flag dir (required by interrupt mode)',
  ],
  [
    'SKYHOOK_DATA_DIR',
    '/skyhook-package',
    'legacy mode: package copied from here when <rootMount>/<copyDir> is absent',
  ],
  ['SKYHOOK_ROOT_DIR', '/etc/skyhook', 'host dir of flags, history and interrupt flags'],
  ['SKYHOOK_LOG_DIR', '/var/log/skyhook', 'host dir of step and interrupt logs'],
  ['SKYHOOK_AGENT_WRITE_LOGS', 'true', 'false: no step log files (interrupt logs are still written)'],
  ['SKYHOOK_AGENT_BUFFER_LIMIT', '8192', 'read size for step output'],
  ['COPY_RESOLV', 'true', "copy this container's /etc/resolv.conf to the host root"],
  ['OVERLAY_ALWAYS_RUN_STEP', 'false', 'true: run steps even when their flag exists'],
  ['SKYHOOK_AGENT_CHROOT', 'chroot', 'chroot(8) command used to enter the root mount'],
  [
    'SKYHOOK_AGENT_STEP_DELAY_MS',
    '0',
    "extra pause before each step (log names stay distinct without it: a step waits for the next second when this second's name is taken)",
  ],
  ['SKYHOOK_AGENT_REBOOT_COMMAND', 'reboot', 'node_restart command, run in the chroot'],
  [
    'SKYHOOK_AGENT_DAEMON_RELOAD_COMMAND',
    'systemctl daemon-reload',
    'first service_restart command, run in the chroot',
  ],
  [
    'SKYHOOK_AGENT_SERVICE_RESTART_COMMAND',
    'systemctl restart',
    'service_restart command, run once per service with its name appended',
  ],
  [
    'SKYHOOK_AGENT_RESTART_ALL_SERVICES_COMMAND',
    'service procps force-reload',
    'restart_all_services command, run in the chroot',
  ],
];

type Env = Readonly<Record<string, string | undefined>>;

const DEFAULTS: Readonly<Record<string, string>> = Object.fromEntries(
  AGENT_ENV_DOC.map(([name, value]) => [name, value]),
);

function read(env: Env, name: string): string {
  return env[name] ?? DEFAULTS[name] ?? '';
}

/** Python's `os.getenv(name, default).lower() == "true"`. */
function readFlag(env: Env, name: string): boolean {
  return read(env, name).toLowerCase() === 'true';
}

function readCommand(env: Env, name: string): string[] {
  return read(env, name)
    .split(/\s+/)
    .filter((word) => word !== '');
}

function readNumber(env: Env, name: string): number {
  const value = Number(read(env, name));
  if (!Number.isFinite(value) || value < 0)
    throw new Error(`${name} must be a non-negative number, got '${read(env, name)}'`);
  return value;
}

export function readSettings(env: Env): AgentSettings {
  return {
    resourceId: read(env, 'SKYHOOK_RESOURCE_ID'),
    dataDir: read(env, 'SKYHOOK_DATA_DIR'),
    stateDir: read(env, 'SKYHOOK_ROOT_DIR'),
    logDir: read(env, 'SKYHOOK_LOG_DIR'),
    writeLogs: readFlag(env, 'SKYHOOK_AGENT_WRITE_LOGS'),
    bufferLimit: readNumber(env, 'SKYHOOK_AGENT_BUFFER_LIMIT'),
    copyResolv: readFlag(env, 'COPY_RESOLV'),
    alwaysRunStep: readFlag(env, 'OVERLAY_ALWAYS_RUN_STEP'),
    chrootCommand: read(env, 'SKYHOOK_AGENT_CHROOT'),
    stepDelayMs: readNumber(env, 'SKYHOOK_AGENT_STEP_DELAY_MS'),
    interruptCommands: {
      reboot: readCommand(env, 'SKYHOOK_AGENT_REBOOT_COMMAND'),
      daemonReload: readCommand(env, 'SKYHOOK_AGENT_DAEMON_RELOAD_COMMAND'),
      restartService: readCommand(env, 'SKYHOOK_AGENT_SERVICE_RESTART_COMMAND'),
      restartAllServices: readCommand(env, 'SKYHOOK_AGENT_RESTART_ALL_SERVICES_COMMAND'),
    },
  };
}

export interface ResourceId {
  id: string;
  packageName: string;
  packageVersion: string;
}

/** `<skyhook>-<uid>-<generation>_<scrPackageName>_<scrVersion>`; exactly three `_`-separated fields. */
export function parseResourceId(resourceId: string): ResourceId {
  const parts = resourceId.split('_');
  if (parts.length !== 3) {
    throw new Error(`SKYHOOK_RESOURCE_ID must be <id>_<package>_<version>, got '${resourceId}'`);
  }
  const [id = '', packageName = '', packageVersion = ''] = parts;
  return { id, packageName, packageVersion };
}
