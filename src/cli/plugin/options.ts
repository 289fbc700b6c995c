/**
 * The flags every plugin command shares (upstream's global flags plus the per-command ones, all
 * parsed in one place so a flag means the same thing in every command) and the errors that end a
 * command: a UsageError (exit 2, with the command's usage) or a CommandError (exit 1).
 */
import { parseArgs } from 'node:util';
import { OPERATOR_NAMESPACE } from '../../api/operator-rbac.js';

export const OUTPUT_FORMATS = ['table', 'wide', 'json', 'yaml', 'name'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export interface PluginOptions {
  kubeconfig?: string;
  /** Where the operator's NodeOps, Jobs and ConfigMaps live. */
  namespace: string;
  output: OutputFormat;
  /** Print what would change; change nothing. */
  dryRun: boolean;
  /** Skip the confirmation of destructive commands. */
  yes: boolean;
  skyhook?: string;
  node?: string;
  stage?: string;
  tail?: number;
  skipBatchReset: boolean;
  /** `package logs -f`: stream the stage containers' logs as they run. */
  follow: boolean;
  /** `status --watch`: keep printing changes (kubectl's -w). */
  watch: boolean;
  /** `version --client`: the client's version only, no cluster. */
  client: boolean;
  /** `maintenance release --force`: release a slot whose daemon is alive. */
  force: boolean;
  help: boolean;
}

/** Wrong arguments: the command prints its usage and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The command could not do what was asked (not found, refused, API error): exit 1. */
export class CommandError extends Error {
  override readonly name = 'CommandError';
}

export const COMMON_FLAGS_HELP = `Common options:
  --kubeconfig FILE     kubeconfig to use (default: $KUBECONFIG, in-cluster, ~/.kube/config)
  -n, --namespace NS    namespace of the operator's Jobs and NodeOps (default: ${OPERATOR_NAMESPACE})
  -o, --output FORMAT   ${OUTPUT_FORMATS.join('|')} (default: table)
  --dry-run             print what would change and change nothing
  -y, --yes             do not ask before destructive changes (alias: --confirm)`;

/** parseArgs throws a plain TypeError on an unknown or malformed flag: that is the user's mistake (exit 2). */
function usageErrorOnThrow<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

export function parsePluginArgs(argv: string[]): { options: PluginOptions; positionals: string[] } {
  const parsed = usageErrorOnThrow(() =>
    parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        kubeconfig: { type: 'string' },
        namespace: { type: 'string', short: 'n', default: OPERATOR_NAMESPACE },
        output: { type: 'string', short: 'o', default: 'table' },
        'dry-run': { type: 'boolean', default: false },
        yes: { type: 'boolean', short: 'y', default: false },
        confirm: { type: 'boolean', default: false },
        skyhook: { type: 'string' },
        node: { type: 'string' },
        stage: { type: 'string' },
        tail: { type: 'string' },
        'skip-batch-reset': { type: 'boolean', default: false },
        client: { type: 'boolean', default: false },
        force: { type: 'boolean', default: false },
        watch: { type: 'boolean', short: 'w', default: false },
        follow: { type: 'boolean', short: 'f', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }),
  );
  const { values, positionals } = parsed;
  const output = values.output;
  if (!isOutputFormat(output))
    throw new UsageError(`--output must be one of ${OUTPUT_FORMATS.join(', ')}, not '${output}'`);
  const options: PluginOptions = {
    namespace: values.namespace,
    output,
    dryRun: values['dry-run'],
    yes: values.yes || values.confirm,
    skipBatchReset: values['skip-batch-reset'],
    client: values.client,
    force: values.force,
    watch: values.watch,
    follow: values.follow,
    help: values.help,
  };
  if (values.kubeconfig !== undefined) options.kubeconfig = values.kubeconfig;
  if (values.skyhook !== undefined) options.skyhook = values.skyhook;
  if (values.node !== undefined) options.node = values.node;
  if (values.stage !== undefined) options.stage = values.stage;
  if (values.tail !== undefined) {
    const tail = Number(values.tail);
    if (!Number.isInteger(tail) || tail < 0)
      throw new UsageError(`--tail must be a whole number of lines, not '${values.tail}'`);
    options.tail = tail;
  }
  return { options, positionals };
}

function isOutputFormat(value: string): value is OutputFormat {
  return (OUTPUT_FORMATS as readonly string[]).includes(value);
}

/** The `--skyhook` flag, which the command cannot do without. */
export function requireSkyhookFlag(options: PluginOptions): string {
  if (!options.skyhook) throw new UsageError('--skyhook NAME is required: the Skyhook whose state to read or change');
  return options.skyhook;
}

/** Exactly `names.length` positional arguments, named in the error when missing. */
export function requirePositionals(positionals: string[], names: string[]): string[] {
  if (positionals.length < names.length)
    throw new UsageError(
      `missing argument ${names
        .slice(positionals.length)
        .map((n) => `<${n}>`)
        .join(' ')}`,
    );
  if (positionals.length > names.length) throw new UsageError(`unexpected argument '${positionals[names.length]}'`);
  return positionals;
}
