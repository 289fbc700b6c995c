/**
 * How the operator process is tuned where it really runs, read from its Deployment
 * (config/manager/manager.yaml): the container's memory limit and the env entries with literal
 * values that Node or the C library read at start (NODE_OPTIONS, MALLOC_*). The benchmarks start
 * the operator with exactly these, so their figures are those of the deployment, not of flags only
 * a benchmark uses. BENCH_OPERATOR_HEAP_MB and BENCH_OPERATOR_NODE_OPTIONS change them for an
 * experiment, and the benchmark's JSON says so.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

export const MANAGER_MANIFEST = fileURLToPath(new URL('../config/manager/manager.yaml', import.meta.url));
const CONTAINER = 'operator';
/** Read by the runtime before any of our code runs; other env entries are the operator's own settings. */
const RUNTIME_ENV = /^(NODE_OPTIONS|MALLOC_[A-Z_]+|UV_THREADPOOL_SIZE)$/;

export interface OperatorRuntime {
  /** The runtime env entries the operator process gets. */
  env: Record<string, string>;
  /** The container's memory limit in MiB, if it has one. */
  memoryLimitMb: number | undefined;
  /** What differs from the manifest (benchmark overrides), for the output. */
  overrides: string[];
}

interface EnvEntry {
  name?: string;
  value?: unknown;
}

interface ContainerSpec {
  name?: string;
  env?: EnvEntry[];
  resources?: { limits?: { memory?: string } };
}

/** A Kubernetes memory quantity (`512Mi`, `1Gi`, `500M`, `1048576`) in MiB. */
export function quantityToMb(quantity: string): number {
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(quantity.trim());
  if (!match) throw new Error(`not a memory quantity: '${quantity}'`);
  const factors: Record<string, number> = {
    '': 1,
    Ki: 2 ** 10,
    Mi: 2 ** 20,
    Gi: 2 ** 30,
    Ti: 2 ** 40,
    k: 1e3,
    M: 1e6,
    G: 1e9,
    T: 1e12,
  };
  return (Number(match[1]) * factors[match[2] ?? '']!) / 2 ** 20;
}

/** The value of a V8 size flag (`--max-old-space-size=256` or `--max-old-space-size 256`) in NODE_OPTIONS. */
export function nodeOptionMb(nodeOptions: string, flag: string): number | undefined {
  const match = new RegExp(`(?:^|\\s)--${flag}[= ](\\d+)(?:\\s|$)`).exec(nodeOptions);
  return match ? Number(match[1]) : undefined;
}

/** The operator container of the Deployment in `manifestText`. */
function operatorContainer(manifestText: string): ContainerSpec {
  for (const doc of parseAllDocuments(manifestText)) {
    const object = doc.toJS() as {
      kind?: string;
      spec?: { template?: { spec?: { containers?: ContainerSpec[] } } };
    } | null;
    if (object?.kind !== 'Deployment') continue;
    const container = object.spec?.template?.spec?.containers?.find((c) => c.name === CONTAINER);
    if (container) return container;
  }
  throw new Error(`no Deployment with a container named '${CONTAINER}' in the manager manifest`);
}

/** The runtime settings of the manifest, with `benchEnv`'s overrides applied. */
export function operatorRuntimeOf(manifestText: string, benchEnv: NodeJS.ProcessEnv = {}): OperatorRuntime {
  const container = operatorContainer(manifestText);
  const env: Record<string, string> = {};
  for (const entry of container.env ?? []) {
    if (entry.name && RUNTIME_ENV.test(entry.name) && entry.value !== undefined) env[entry.name] = String(entry.value);
  }
  const limit = container.resources?.limits?.memory;
  const overrides: string[] = [];
  const heapMb = benchEnv['BENCH_OPERATOR_HEAP_MB'];
  if (heapMb) {
    const kept = (env['NODE_OPTIONS'] ?? '').replace(/(^|\s)--max-old-space-size[= ]\d+/g, '').trim();
    env['NODE_OPTIONS'] = `${kept} --max-old-space-size=${Number(heapMb)}`.trim();
    overrides.push(`BENCH_OPERATOR_HEAP_MB=${heapMb}`);
  }
  const extra = benchEnv['BENCH_OPERATOR_NODE_OPTIONS'];
  if (extra) {
    env['NODE_OPTIONS'] = `${env['NODE_OPTIONS'] ?? ''} ${extra}`.trim();
    overrides.push(`BENCH_OPERATOR_NODE_OPTIONS=${extra}`);
  }
  return { env, memoryLimitMb: limit === undefined ? undefined : quantityToMb(limit), overrides };
}

/** The operator's runtime settings as deployed (plus this run's overrides). */
export function operatorRuntime(): OperatorRuntime {
  return operatorRuntimeOf(readFileSync(MANAGER_MANIFEST, 'utf8'), process.env);
}
