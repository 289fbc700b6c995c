/** How a step's command line and environment are built. Pure. */
import type { StepConfig } from './config-schema.js';
import { pyBool, pyReprList } from './python-format.js';

type Env = Readonly<Record<string, string | undefined>>;

export type Substitution = { ok: true; arguments: string[] } | { ok: false; errors: string[] };

/** `env:NAME` arguments take the value of the agent's variable NAME; a missing one fails the step. */
export function substituteEnvArguments(step: Pick<StepConfig, 'path' | 'arguments'>, env: Env): Substitution {
  const errors: string[] = [];
  const args = step.arguments.map((arg) => {
    if (!arg.startsWith('env:')) return arg;
    const name = arg.slice('env:'.length);
    const value = env[name];
    if (value === undefined) errors.push(`${step.path}: Expected environment variable did not exist: ${name}`);
    return value ?? '';
  });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, arguments: args };
}

/** Host tools the published packages call (systemctl, sysctl, update-grub, apt) live here. */
const SYSTEM_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

export function withSystemPath(path: string | undefined): string {
  const dirs = (path ?? '').split(':').filter((d) => d !== '');
  return [...dirs, ...SYSTEM_PATH.filter((d) => !dirs.includes(d))].join(':');
}

/**
 * The step's environment, lowest precedence first: the agent's own (which carries the SCR `env`
 * and SKYHOOK_RESOURCE_ID), the step's `env` (plus CURRENT_VERSION/PREVIOUS_VERSION in upgrade
 * modes), then SKYHOOK_DIR and STEP_ROOT.
 */
export function stepEnvironment(
  agentEnv: Env,
  stepEnv: Readonly<Record<string, string>>,
  copyDir: string,
): Record<string, string> {
  return { ...hostEnvironment(agentEnv), ...stepEnv, STEP_ROOT: stepRoot(copyDir), SKYHOOK_DIR: copyDir };
}

/** The agent's environment for a command on the host, with the system dirs on PATH. */
export function hostEnvironment(agentEnv: Env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(agentEnv)) if (value !== undefined) env[name] = value;
  env['PATH'] = withSystemPath(env['PATH']);
  return env;
}

export function stepRoot(copyDir: string): string {
  return `${copyDir}/skyhook_dir`;
}

/** The script as the host sees it: run by absolute path, so scripts can find their siblings. */
export function stepScriptPath(copyDir: string, stepPath: string): string {
  return `${stepRoot(copyDir)}/${stepPath}`;
}

/** The line printed before each step, as upstream prints it. */
export function stepBanner(mode: string, step: StepConfig, args: readonly string[]): string {
  const idempotence = step.idempotence ? 'Idempotence.Disabled' : 'Idempotence.Auto';
  return `${mode} ${step.path} ${pyReprList(args)} ${pyReprList(step.returncodes)} ${idempotence} ${pyBool(step.on_host)}`;
}
