/**
 * Operator-wide settings of NodeOp Jobs and reboot pods, with their environment variables. The
 * variable names follow the Kairos operator where it has one (NODEOP_DEFAULT_IMAGE, SENTINEL_IMAGE)
 * and newer upstream Skyhook for Job retention (JOB_TTL_SUCCEEDED, JOB_TTL_FAILED).
 */
import { readSettings, type InterruptCommands } from '../agent/settings.js';
import { parseDurationMs } from '../util/duration.js';

export interface NodeOpSettings {
  /** Image of a NodeOp that names none. */
  defaultImage: string;
  /** Image of the sentinel container and the reboot pod: needs /bin/sh, and nsenter for the reboot pod. */
  helperImage: string;
  /** A succeeded Job (and its pods' logs) is kept this long after it finished. */
  jobTtlSucceededSeconds: number;
  /** A failed Job is kept longer: its pods' logs explain the failure. Also the TTL a Job is created with. */
  jobTtlFailedSeconds: number;
  /** Job backoffLimit when the NodeOp sets none. */
  defaultBackoffLimit: number;
  /** Host commands of each interrupt type (the agent's defaults and variables). */
  interruptCommands: InterruptCommands;
  /** A pod stuck in ImagePullBackOff, CrashLoopBackOff, … this long fails its node. */
  stuckPodTimeoutMs: number;
  /** A requested reboot that has not changed the node's bootID (or left it NotReady) this long fails the node. */
  rebootTimeoutMs: number;
  /**
   * Who runs the Jobs' pods: `operator` (the NodeOp controller, through the Jobs' `spec.managedBy`:
   * two writes per Job instead of the Job controller's eight, jobs/job-runner/) or `kubernetes` (the
   * built-in Job controller). A cluster without `spec.managedBy` (before 1.32, or the JobManagedBy
   * gate off) drops the field, and its Job controller runs the Jobs either way.
   */
  jobRunner: 'operator' | 'kubernetes';
  /**
   * Namespaces whose NodeOps the operator runs, besides its own (where the Skyhook controller puts
   * its stage NodeOps): a NodeOp runs privileged on nodes, so whoever may create one in a namespace
   * would get root on nodes. `*` runs every namespace's NodeOps.
   */
  extraNamespaces: readonly string[];
}

/**
 * The image this project builds from its Dockerfile: the operator and the node agent. It is also the
 * default sentinel/reboot image because the reboot pod must run the *node's* `reboot` through
 * `nsenter -t 1 -m -- …`: Debian's util-linux nsenter and dash in this image do, whereas a busybox
 * whose applets take precedence (Debian's busybox-static) runs its own `reboot` applet instead, which
 * signals the pod's view of PID 1 and never reboots the node (reference/real-node.md §5.3). Nodes
 * already hold this image for the stage Jobs, so the reboot pod costs no extra pull.
 */
export const SKYHOOK_IMAGE = 'ghcr.io/skyhook-ts/skyhook:0.1.0';

export const NODEOP_ENV_DOC: ReadonlyArray<readonly [name: string, defaultValue: string, meaning: string]> = [
  ['NODEOP_DEFAULT_IMAGE', 'busybox:1.37', 'image of NodeOps without spec.image'],
  [
    'SENTINEL_IMAGE',
    SKYHOOK_IMAGE,
    "image of the sentinel container and the reboot pod (needs sh and an nsenter that runs the host's commands); default: AGENT_IMAGE when set, else the skyhook image",
  ],
  ['JOB_TTL_SUCCEEDED', '1h', 'how long a succeeded Job and its logs are kept (at least 1m)'],
  ['JOB_TTL_FAILED', '24h', 'how long a failed Job and its logs are kept (at least 1m)'],
  ['NODEOP_STUCK_POD_TIMEOUT_SECONDS', '60', 'ImagePullBackOff/CrashLoopBackOff longer than this fails the node'],
  [
    'NODEOP_REBOOT_TIMEOUT_SECONDS',
    '1800',
    'a reboot not seen (bootID unchanged or node NotReady) after this fails the node',
  ],
  [
    'NODEOP_JOB_RUNNER',
    'operator',
    "who runs the stage Jobs' pods: operator (the NodeOp controller, via the Job's spec.managedBy; far fewer API writes) or kubernetes (the built-in Job controller)",
  ],
  [
    'NODEOP_NAMESPACES',
    '',
    "comma-separated namespaces whose NodeOps run, besides the operator's own (a NodeOp gets root on the nodes it selects, so only namespaces whose NodeOp creators you trust); * for every namespace",
  ],
  [
    'NODEOP_WORKERS',
    '16',
    'NodeOps reconciled at once; each mostly waits on the API server (Job create, status patch), so 16 keep a 1000-node rollout (budget 100) fed',
  ],
];

const DEFAULTS: Readonly<Record<string, string>> = Object.fromEntries(
  NODEOP_ENV_DOC.map(([name, value]) => [name, value]),
);

type Env = Readonly<Record<string, string | undefined>>;

function readSeconds(env: Env, name: string): number {
  const text = env[name] || DEFAULTS[name] || '0';
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0)
    throw new Error(`${name} must be a whole number of seconds, got '${text}'`);
  return value;
}

/** Upstream's JOB_TTL_* form: a Go duration of at least a minute (a shorter one would lose logs before anyone reads them). */
function readTtlSeconds(env: Env, name: string): number {
  const text = env[name] || DEFAULTS[name]!;
  const seconds = Math.ceil(parseDurationMs(text) / 1000);
  if (seconds < 60) throw new Error(`${name} must be at least 1m, got '${text}'`);
  return seconds;
}

export function readNodeOpSettings(env: Env): NodeOpSettings {
  return {
    defaultImage: env['NODEOP_DEFAULT_IMAGE'] || DEFAULTS['NODEOP_DEFAULT_IMAGE']!,
    helperImage: env['SENTINEL_IMAGE'] || env['AGENT_IMAGE'] || DEFAULTS['SENTINEL_IMAGE']!,
    jobTtlSucceededSeconds: readTtlSeconds(env, 'JOB_TTL_SUCCEEDED'),
    jobTtlFailedSeconds: readTtlSeconds(env, 'JOB_TTL_FAILED'),
    defaultBackoffLimit: 6,
    interruptCommands: readSettings(env).interruptCommands,
    stuckPodTimeoutMs: readSeconds(env, 'NODEOP_STUCK_POD_TIMEOUT_SECONDS') * 1000,
    rebootTimeoutMs: readSeconds(env, 'NODEOP_REBOOT_TIMEOUT_SECONDS') * 1000,
    jobRunner: readJobRunner(env),
    extraNamespaces: readNamespaces(env),
  };
}

/** NODEOP_NAMESPACES: DNS-1123 labels, or `*` alone. */
function readNamespaces(env: Env): string[] {
  const names = (env['NODEOP_NAMESPACES'] ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  const bad = names.filter((n) => n !== '*' && !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(n));
  if (bad.length > 0 || (names.includes('*') && names.length > 1))
    throw new Error(
      `NODEOP_NAMESPACES must be comma-separated namespace names, or * alone, got '${env['NODEOP_NAMESPACES']}'`,
    );
  return names;
}

function readJobRunner(env: Env): NodeOpSettings['jobRunner'] {
  const text = env['NODEOP_JOB_RUNNER'] || DEFAULTS['NODEOP_JOB_RUNNER']!;
  if (text !== 'operator' && text !== 'kubernetes')
    throw new Error(`NODEOP_JOB_RUNNER must be 'operator' or 'kubernetes', got '${text}'`);
  return text;
}

/** How many NodeOps the controller reconciles at once (NODEOP_WORKERS, at least 1). */
export function readNodeOpWorkers(env: Env): number {
  const text = env['NODEOP_WORKERS'] || DEFAULTS['NODEOP_WORKERS']!;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`NODEOP_WORKERS must be a whole number >= 1, got '${text}'`);
  return value;
}
