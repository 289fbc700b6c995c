/**
 * The operator as its own process (the built CLI, `node bin/skyhook.js operator`), as it runs in a
 * cluster: its memory is its own (VmHWM from /proc), and its API requests carry the client-node user
 * agent that nothing else writing during a benchmark uses (the benchmark writes with kubectl).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startComponent, stopComponent, type Component } from '../src/sandbox/processes.js';
import { REPO_ROOT } from '../test/e2e/skyhook-cluster.js';
import { CLOCK_TICKS_PER_SECOND, processTicks } from './cpu-usage.js';
import { operatorRuntime } from './operator-runtime.js';

export interface OperatorProcess {
  pid: number;
  /** Its leader-election identity (`<hostname>_<uuid>`). */
  identity: string;
  logFile: string;
  /** Peak resident set size so far, in MiB (the kernel's high-water mark, so no sample is missed). */
  peakRssMb(): number;
  /**
   * Of the RSS now, the pages mapped from files (the Node binary's code and read-only data, shared
   * libraries), in MiB: shared with any other process running the same binary and reclaimable by the
   * kernel, unlike the anonymous rest (the heaps). They only grow, so the last reading is the peak's.
   */
  rssFromFilesMb(): number;
  /** CPU time (user + system) used so far, in seconds. */
  cpuSeconds(): number;
  /** Per controller: reconciles, their total time, and how many ended in each result (from /metrics). */
  reconcileStats(): Promise<Record<string, ReconcileStats>>;
  /** The whole /metrics exposition now (for histograms: bench/histogram.ts). */
  metricsText(): Promise<string>;
  /** The V8 heap and RSS now, in MiB (from /metrics): where the RSS is, inside the JS heap or outside it. */
  memoryStats(): Promise<MemoryStats>;
  /** Resolves with the exit code (or signal) once the process has exited. */
  exited: Promise<string>;
  /** SIGKILL, as a crash or an OOM kill would end it; resolves once it has exited. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

export interface OperatorProcessOptions {
  /** The runtime env (NODE_OPTIONS …); default: the Deployment's (operator-runtime.ts). */
  runtimeEnv?: Record<string, string>;
  /** Names its log file (`logs/<name>.log`); each process started needs its own. Default `operator`. */
  name?: string;
  /** Leader election on the Lease, as a Deployment with several replicas runs it. Default off. */
  leaderElect?: boolean;
  /** Settings of its Deployment's env beside the runtime's (REGISTRY_CA_FILE, IMAGE_PULL_SECRET …). */
  settingsEnv?: Record<string, string>;
}

export interface ReconcileStats {
  count: number;
  totalSeconds: number;
  byResult: Record<string, number>;
  /** The Skyhook controller's requeues by why (skyhook_reconcile_requeues_total{reason}). */
  requeueReasons?: Record<string, number>;
}

export interface MemoryStats {
  rssMb: number;
  /** Live and garbage JS objects not yet collected. */
  heapUsedMb: number;
  /** What V8 has reserved for the heap (young and old generation, code). */
  heapTotalMb: number;
  /** Buffers and other memory V8 objects hold outside the heap. */
  externalMb: number;
}

const READY_TIMEOUT_MS = 120_000;
function cpuSecondsOf(pid: number): number {
  return processTicks(readFileSync(`/proc/${pid}/stat`, 'utf8')) / CLOCK_TICKS_PER_SECOND;
}

/** The controller_runtime_reconcile_* series of a Prometheus text exposition, by controller. */
export function parseReconcileStats(text: string): Record<string, ReconcileStats> {
  const stats: Record<string, ReconcileStats> = {};
  const of = (controller: string): ReconcileStats =>
    (stats[controller] ??= { count: 0, totalSeconds: 0, byResult: {} });
  for (const line of text.split('\n')) {
    const requeue = /^skyhook_reconcile_requeues_total\{reason="([^"]*)"\} (\S+)$/.exec(line);
    if (requeue) {
      const entry = of('skyhook');
      entry.requeueReasons = { ...entry.requeueReasons, [requeue[1]!]: Number(requeue[2]) };
    }
    const match =
      /^(controller_runtime_reconcile_(?:time_seconds_sum|time_seconds_count|total))\{([^}]*)\} (\S+)$/.exec(line);
    if (!match) continue;
    const labels = Object.fromEntries([...match[2]!.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
    const entry = of(labels['controller'] ?? '?');
    const value = Number(match[3]);
    if (match[1] === 'controller_runtime_reconcile_time_seconds_sum')
      entry.totalSeconds = Math.round(value * 100) / 100;
    else if (match[1] === 'controller_runtime_reconcile_time_seconds_count') entry.count = value;
    else entry.byResult[labels['result'] ?? '?'] = value;
  }
  return stats;
}

/** The process memory gauges of a Prometheus text exposition (prom-client's default metrics). */
export function parseMemoryStats(text: string): MemoryStats {
  const gauge = (name: string): number => {
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return Math.round(Number(line?.split(' ')[1] ?? NaN) / 2 ** 20);
  };
  return {
    rssMb: gauge('process_resident_memory_bytes'),
    heapUsedMb: gauge('nodejs_heap_size_used_bytes'),
    heapTotalMb: gauge('nodejs_heap_size_total_bytes'),
    externalMb: gauge('nodejs_external_memory_bytes'),
  };
}

function statusFieldKb(pid: number, field: string): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  return Number(line?.split(/\s+/)[1] ?? NaN);
}

/** dist/ is what runs: say so when src/ changed after the last build, as the figures would be of old code. */
function warnIfBuildStale(): void {
  const built = join(REPO_ROOT, 'dist/cli/main.js');
  if (!existsSync(built)) throw new Error('dist/ is missing: run `npm run build` first');
  const src = join(REPO_ROOT, 'src');
  const newest = Math.max(
    0,
    ...readdirSync(src, { recursive: true, encoding: 'utf8' }).map((f) => statSync(join(src, f)).mtimeMs),
  );
  if (newest > statSync(built).mtimeMs)
    console.error('bench: src/ is newer than dist/; run `npm run build` for figures of the current code');
}

/** This process's environment without what tunes a runtime (the operator gets the manifest's instead). */
function inheritedEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([name]) => name !== 'NODE_OPTIONS' && !name.startsWith('MALLOC_')),
  );
}

/**
 * Starts the operator against the control plane at `kubeconfigPath` with the runtime env of its
 * Deployment (NODE_OPTIONS, MALLOC_ARENA_MAX …: operator-runtime.ts; `runtimeEnv` replaces it);
 * resolves once its controllers run.
 */
export async function startOperatorProcess(
  runDir: string,
  kubeconfigPath: string,
  options: OperatorProcessOptions = {},
): Promise<OperatorProcess> {
  warnIfBuildStale();
  const component: Component = startComponent(
    runDir,
    options.name ?? 'operator',
    process.execPath,
    [
      join(REPO_ROOT, 'bin/skyhook.js'),
      'operator',
      '--kubeconfig',
      kubeconfigPath,
      `--leader-elect=${options.leaderElect === true}`,
      '--health-port',
      '127.0.0.1:0',
      '--metrics-port',
      '127.0.0.1:0',
      '--log-level',
      // BENCH_LOG_LEVEL=debug traces each reconcile's plan, wakes and requeues (timestamps to look into a gap).
      process.env['BENCH_LOG_LEVEL'] ?? 'info',
    ],
    { ...inheritedEnv(), ...(options.runtimeEnv ?? operatorRuntime().env), ...options.settingsEnv },
  );
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!(existsSync(component.logFile) && readFileSync(component.logFile, 'utf8').includes('"operator started"'))) {
    if (component.child.exitCode !== null || Date.now() > deadline) {
      await stopComponent(component);
      throw new Error(`the operator did not start; see ${component.logFile}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const startedLine =
    readFileSync(component.logFile, 'utf8')
      .split('\n')
      .find((l) => l.includes('"operator started"')) ?? '{}';
  const { metricsPort, identity } = JSON.parse(startedLine) as { metricsPort?: number; identity?: string };
  const metricsText = async (): Promise<string> => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  let lastPeakKb = 0;
  let lastFileKb = 0;
  return {
    pid: component.pid,
    identity: identity ?? '',
    logFile: component.logFile,
    peakRssMb: () => {
      // Read while alive; once it has exited, the last reading stands.
      if (component.child.exitCode === null) lastPeakKb = statusFieldKb(component.pid, 'VmHWM');
      return Math.round(lastPeakKb / 1024);
    },
    rssFromFilesMb: () => {
      if (component.child.exitCode === null) lastFileKb = statusFieldKb(component.pid, 'RssFile');
      return Math.round(lastFileKb / 1024);
    },
    cpuSeconds: () => cpuSecondsOf(component.pid),
    reconcileStats: async () => parseReconcileStats(await metricsText()),
    metricsText,
    memoryStats: async () => parseMemoryStats(await metricsText()),
    exited: component.exited,
    kill: async () => {
      component.child.kill('SIGKILL');
      await component.exited;
    },
    stop: () => stopComponent(component),
  };
}
