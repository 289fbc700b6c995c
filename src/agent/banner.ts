/** The configuration banner the agent prints when it starts, laid out as upstream's. */
import type { AgentInvocation } from './args.js';
import { historyPath, packageFlagsDir, packageLogDir, type HostLayout } from './host-paths.js';
import { pyBool, pyCenter } from './python-format.js';
import { parseResourceId, type AgentSettings } from './settings.js';

export function startupBanner(invocation: AgentInvocation, settings: AgentSettings): string {
  const rule = '-'.repeat(20);
  // Upstream shows the host paths without the root mount, for the package named in the resource id.
  const hostOnly: HostLayout = { rootMount: 'local', stateDir: settings.stateDir, logDir: settings.logDir };
  const resource = safeResourceId(settings.resourceId);
  const lines = [
    rule,
    pyCenter('CLI CONFIGURATION', 20, '-'),
    `mode: ${invocation.mode}`,
    `root_mount: ${invocation.rootMount}`,
    `copy_dir: ${invocation.copyDir}`,
    `interrupt_data: ${invocation.interruptData ?? 'None'}`,
    `always_run_step: ${pyBool(settings.alwaysRunStep)}`,
    pyCenter('ENV CONFIGURATION', 20, '-'),
    `COPY_RESOLV: ${pyBool(settings.copyResolv)}`,
    `OVERLAY_ALWAYS_RUN_STEP: ${pyBool(settings.alwaysRunStep)}`,
    `SKYHOOK_RESOURCE_ID: ${settings.resourceId}`,
    `SKYHOOK_DATA_DIR: ${settings.dataDir}`,
    `SKYHOOK_ROOT_DIR: ${settings.stateDir}`,
    `SKYHOOK_LOG_DIR: ${settings.logDir}`,
    `SKYHOOK_AGENT_WRITE_LOGS: ${pyBool(settings.writeLogs)}`,
    `SKYHOOK_AGENT_BUFFER_LIMIT: ${settings.bufferLimit}`,
    pyCenter('Directory CONFIGURATION', 20, '-'),
    `flag_dir: ${packageFlagsDir(hostOnly, resource.packageName, resource.packageVersion)}`,
    `log_dir: ${packageLogDir(hostOnly, resource.packageName, resource.packageVersion)}`,
    `history_file: ${historyPath(hostOnly, resource.packageName)}`,
    rule,
  ];
  return `${lines.join('\n')}\n`;
}

/** Upstream crashes here on a malformed id; we only need it for display (interrupt mode still requires it). */
function safeResourceId(resourceId: string): { packageName: string; packageVersion: string } {
  try {
    return parseResourceId(resourceId);
  } catch {
    return { packageName: '<package>', packageVersion: '<version>' };
  }
}
