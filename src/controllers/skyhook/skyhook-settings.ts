/**
 * Operator-wide settings of the Skyhook controller, from the environment variables upstream's
 * operator reads (reference/skyhook.md §4.1), so a Deployment written for upstream configures ours.
 */
import { DEFAULT_RUNTIME_REQUIRED_TAINT } from '../../api/names.js';
import { operatorVersion } from '../../api/operator-version.js';
import { parseDurationMs } from '../../util/duration.js';
import { readNodeOpSettings, SKYHOOK_IMAGE } from '../../templates/nodeop-settings.js';
import { DEFAULT_PLANNER_SETTINGS } from './plan/planner-types.js';
import { DEFAULT_WRITE_CONCURRENCY } from './write/bounded-writes.js';

export interface SkyhookSettings {
  /** Where stage NodeOps and package ConfigMaps live (NAMESPACE). */
  namespace: string;
  /** Image of the agent containers (AGENT_IMAGE); a package's agentImageOverride wins. */
  agentImage: string;
  /** Host work directory root (COPY_DIR_ROOT). */
  copyDirRoot: string;
  /** Host log root of the agent (AGENT_LOG_ROOT). */
  agentLogRoot: string;
  /** One pull secret for every stage (IMAGE_PULL_SECRET); empty = none. */
  imagePullSecret: string;
  runtimeRequiredTaint: { key: string; value: string; effect: TaintEffect };
  /** Job backoffLimit of a stage: failed attempts the Job retries itself (JOB_BACKOFF_LIMIT). */
  jobBackoffLimit: number;
  /** Deadline of one stage attempt when the package sets none (JOB_STAGE_TIMEOUT); 0 = none. */
  defaultStageTimeoutSeconds: number;
  /** Written to `version_<scr>` on nodes and `skyhook.nvidia.com/version` on each SCR (OPERATOR_VERSION, else package.json's). */
  operatorVersion: string;
  /** How long a finished stage NodeOp is kept once recorded: as long as its Job (JOB_TTL_SUCCEEDED, JOB_TTL_FAILED). */
  finishedOpRetentionMs: { succeeded: number; failed: number };
  /**
   * API writes one reconcile's independent actions keep in flight, over all of the controller's
   * workers (SKYHOOK_WRITE_CONCURRENCY, default 32); 1 applies them one by one.
   */
  writeConcurrency: number;
}

export type TaintEffect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';

type Env = Readonly<Record<string, string | undefined>>;

/** `key=value:effect`, as kubectl taint writes it. */
export function parseTaint(text: string): SkyhookSettings['runtimeRequiredTaint'] {
  const match = /^([^=:\s]+)=([^:\s]*):(NoSchedule|PreferNoSchedule|NoExecute)$/.exec(text.trim());
  if (!match) throw new Error(`RUNTIME_REQUIRED_TAINT must look like key=value:NoSchedule, not '${text}'`);
  return { key: match[1]!, value: match[2]!, effect: match[3] as TaintEffect };
}

export function readSkyhookSettings(env: Env, namespace: string): SkyhookSettings {
  const absolute = (name: string, fallback: string): string => {
    const value = env[name] || fallback;
    if (!value.startsWith('/')) throw new Error(`${name} must be an absolute path, not '${value}'`);
    return value.replace(/\/+$/, '');
  };
  const backoff = Number(env['JOB_BACKOFF_LIMIT'] || '3');
  if (!Number.isInteger(backoff) || backoff < 0)
    throw new Error(`JOB_BACKOFF_LIMIT must be a whole number, not '${env['JOB_BACKOFF_LIMIT']}'`);
  const writeConcurrency = Number(env['SKYHOOK_WRITE_CONCURRENCY'] || String(DEFAULT_WRITE_CONCURRENCY));
  if (!Number.isInteger(writeConcurrency) || writeConcurrency < 1)
    throw new Error(
      `SKYHOOK_WRITE_CONCURRENCY must be a whole number of at least 1, not '${env['SKYHOOK_WRITE_CONCURRENCY']}'`,
    );
  const taint = env['RUNTIME_REQUIRED_TAINT'];
  const nodeOp = readNodeOpSettings(env);
  return {
    namespace,
    agentImage: env['AGENT_IMAGE'] || SKYHOOK_IMAGE,
    copyDirRoot: absolute('COPY_DIR_ROOT', '/var/lib/skyhook'),
    agentLogRoot: absolute('AGENT_LOG_ROOT', '/var/log/skyhook'),
    imagePullSecret: env['IMAGE_PULL_SECRET'] ?? '',
    runtimeRequiredTaint: taint ? parseTaint(taint) : { ...DEFAULT_RUNTIME_REQUIRED_TAINT },
    jobBackoffLimit: backoff,
    defaultStageTimeoutSeconds: env['JOB_STAGE_TIMEOUT']
      ? Math.ceil(parseDurationMs(env['JOB_STAGE_TIMEOUT']) / 1000)
      : DEFAULT_PLANNER_SETTINGS.defaultStageTimeoutSeconds,
    operatorVersion: operatorVersion(env),
    finishedOpRetentionMs: {
      succeeded: nodeOp.jobTtlSucceededSeconds * 1000,
      failed: nodeOp.jobTtlFailedSeconds * 1000,
    },
    writeConcurrency,
  };
}
