/**
 * Where the agent reads and writes on the host, as seen from the agent (prefixed with the root
 * mount). Strings are joined exactly as upstream joins them, double slashes included, because
 * people and the operator's tests look for these paths.
 */

export interface HostLayout {
  /** Where the host root is mounted; `local` means the agent already runs on the host. */
  rootMount: string;
  /** SKYHOOK_ROOT_DIR: flags, history and interrupt flags. */
  stateDir: string;
  /** SKYHOOK_LOG_DIR. */
  logDir: string;
}

function mountPrefix(layout: HostLayout): string {
  return layout.rootMount === 'local' ? '' : layout.rootMount;
}

/** A host path (as the steps see it) seen from the agent. */
export function onHost(layout: Pick<HostLayout, 'rootMount'>, hostPath: string): string {
  return layout.rootMount === 'local' ? hostPath : `${layout.rootMount}/${hostPath}`;
}

export const flagsDir = (l: HostLayout): string => `${mountPrefix(l)}${l.stateDir}/flags`;
export const startFlagPath = (l: HostLayout): string => `${flagsDir(l)}/START`;
export const checkResultsPath = (l: HostLayout): string => `${flagsDir(l)}/check_results`;
export const allCheckedPath = (l: HostLayout, mode: string): string => `${flagsDir(l)}/${mode}_ALL_CHECKED`;
export const packageFlagsDir = (l: HostLayout, pkg: string, version: string): string =>
  `${flagsDir(l)}/${pkg}/${version}`;
export const historyPath = (l: HostLayout, pkg: string): string => `${mountPrefix(l)}${l.stateDir}/history/${pkg}.json`;
export const interruptFlagDir = (l: HostLayout, resourceId: string): string =>
  `${mountPrefix(l)}${l.stateDir}/interrupts/flags/${resourceId}`;
export const interruptFlagPath = (l: HostLayout, resourceId: string, interruptId: string): string =>
  `${interruptFlagDir(l, resourceId)}/${interruptId}.complete`;
export const packageLogDir = (l: HostLayout, pkg: string, version: string): string =>
  `${mountPrefix(l)}${l.logDir}/${pkg}/${version}`;

/**
 * A log file: `<log dir>/<pkg>/<ver>/<name>-<timestamp>.log`. Step logs are named `/<step path>`
 * (hence upstream's double slash), interrupt logs `interrupts/<type>_<i>`.
 */
export function logFilePath(l: HostLayout, pkg: string, version: string, name: string, timestamp: string): string {
  return `${packageLogDir(l, pkg, version)}/${name}-${timestamp}.log`;
}

export const stepLogName = (stepPath: string): string => `/${stepPath}`;
export const interruptLogName = (interruptId: string): string => `interrupts/${interruptId}`;

/** `%Y-%m-%d-%H%M%S` in UTC: one log per step run and second. */
export function logTimestamp(date: Date): string {
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${date.getUTCFullYear()}-${p(date.getUTCMonth() + 1)}-${p(date.getUTCDate())}-${p(date.getUTCHours())}${p(date.getUTCMinutes())}${p(date.getUTCSeconds())}`;
}
