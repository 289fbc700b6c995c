/**
 * Shell completion, the way kubectl plugins do it (kubectl ≥ 1.26 runs `kubectl_complete-<plugin>`
 * with the words after the plugin's name and reads Cobra's `__complete` answer: one candidate per
 * line, then `:<directive>`). `skyhook __complete WORD…` gives that answer (the last word is the one
 * being completed) and `skyhook completion bash|zsh` prints a script that asks it, for `skyhook`
 * and `kubectl-skyhook` typed directly. Skyhook, node and namespace names come from the cluster
 * (best effort: none when it cannot be reached within a few seconds).
 */
import { RERUN_STAGES } from './plugin/package.js';
import { OUTPUT_FORMATS } from './plugin/options.js';
import { nameOf } from '../api/object-meta.js';

/** Cobra's ShellCompDirectiveNoFileComp: never fall back to file names. */
const NO_FILE_COMPLETION = 4;

const SUBCOMMANDS: Readonly<Record<string, readonly string[]>> = {
  node: ['list', 'status', 'ignore', 'unignore', 'reset'],
  package: ['status', 'rerun', 'logs', 'verify'],
  maintenance: ['status', 'release'],
  'deployment-policy': ['reset'],
  dp: ['reset'],
  completion: ['bash', 'zsh'],
};

const FLAGS = [
  '--kubeconfig',
  '--namespace',
  '--output',
  '--dry-run',
  '--yes',
  '--skyhook',
  '--node',
  '--stage',
  '--tail',
  '--skip-batch-reset',
  '--client',
  '--watch',
  '--follow',
  '--force',
  '--help',
];

/** The commands whose first positional argument is a Skyhook's name. */
const SKYHOOK_ARGUMENT = new Set(['status', 'pause', 'resume', 'disable', 'enable', 'reset']);

type Lister = (kind: 'skyhooks' | 'nodes' | 'namespaces') => Promise<string[]>;

/** Names of one kind from the cluster named by `--kubeconfig` (or the default), [] on any failure. */
function clusterLister(words: string[]): Lister {
  const at = words.indexOf('--kubeconfig');
  const kubeconfig = at >= 0 ? words[at + 1] : undefined;
  return async (kind) => {
    try {
      const { loadKubeConfig, makeClients } = await import('../kube/client.js');
      const clients = makeClients(loadKubeConfig(kubeconfig));
      const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), 3000).unref());
      const request = async (): Promise<string[]> => {
        if (kind === 'nodes') return (await clients.core.listNode()).items.map((n) => nameOf(n));
        if (kind === 'namespaces') return (await clients.core.listNamespace()).items.map((n) => nameOf(n));
        const { skyhookRef } = await import('./plugin/context.js');
        const { group, version, plural } = skyhookRef('');
        const list = (await clients.custom.listClusterCustomObject({ group, version, plural })) as {
          items: { metadata?: { name?: string } }[];
        };
        return list.items.map((s) => nameOf(s));
      };
      return (await Promise.race([request(), timeout])).filter(Boolean).sort();
    } catch {
      return [];
    }
  };
}

/** The candidates for the last of `words` (the words after `skyhook`), filtered by its prefix. */
export async function completeWords(words: string[], commands: readonly string[], list: Lister): Promise<string[]> {
  const current = words.at(-1) ?? '';
  const before = words.slice(0, -1);
  const previous = before.at(-1);
  const visible = commands.filter((c) => !c.startsWith('__'));
  let candidates: readonly string[];
  if (before.length === 0) candidates = visible;
  else if (previous === '-o' || previous === '--output') candidates = OUTPUT_FORMATS;
  else if (previous === '--stage') candidates = [...RERUN_STAGES, 'uninstall', 'upgrade'];
  else if (previous === '--skyhook') candidates = await list('skyhooks');
  else if (previous === '--node') candidates = await list('nodes');
  else if (previous === '-n' || previous === '--namespace') candidates = await list('namespaces');
  else if (previous === '--kubeconfig' || previous === '--tail') candidates = [];
  else if (current.startsWith('-')) candidates = FLAGS;
  else candidates = await positional(before, list);
  return candidates.filter((c) => c.startsWith(current));
}

/** Flags followed by a value (the value is not a positional argument). */
const VALUE_FLAGS = new Set([
  '--kubeconfig',
  '-n',
  '--namespace',
  '-o',
  '--output',
  '--skyhook',
  '--node',
  '--stage',
  '--tail',
]);

/** What the next positional argument of the command in `before` can be. */
async function positional(before: string[], list: Lister): Promise<readonly string[]> {
  const args = before.filter((word, i) => !word.startsWith('-') && !VALUE_FLAGS.has(before[i - 1] ?? ''));
  const [command, subcommand] = args;
  const subcommands = command ? SUBCOMMANDS[command] : undefined;
  if (subcommands && args.length === 1) return subcommands;
  if (command && SKYHOOK_ARGUMENT.has(command) && args.length === 1) return list('skyhooks');
  if (command === 'node' && subcommand && subcommand !== 'list' && args.length === 2) return list('nodes');
  if (command === 'maintenance' && subcommand && args.length === 2) return list('nodes');
  return [];
}

export async function runCompleteCli(argv: string[], commands: readonly string[]): Promise<number> {
  const words = argv.length === 0 ? [''] : argv;
  const candidates = await completeWords(words, commands, clusterLister(words));
  process.stdout.write(`${[...candidates, `:${NO_FILE_COMPLETION}`].join('\n')}\n`);
  return 0;
}

const BASH = `# skyhook completion for bash. Load it with: source <(skyhook completion bash)
_skyhook_complete() {
  local IFS=$'\\n' out
  out=$("\${COMP_WORDS[0]}" __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null) || return
  COMPREPLY=($(printf '%s\\n' "$out" | grep -v '^:'))
}
complete -F _skyhook_complete skyhook kubectl-skyhook
`;

const ZSH = `#compdef skyhook kubectl-skyhook
# skyhook completion for zsh. Load it with: source <(skyhook completion zsh)
_skyhook() {
  local -a out
  out=("\${(@f)$(\${words[1]} __complete "\${(@)words[2,$CURRENT]}" 2>/dev/null)}")
  compadd -- "\${(@)out:#:*}"
}
compdef _skyhook skyhook kubectl-skyhook
`;

export async function runCompletionCli(argv: string[]): Promise<number> {
  const [shell, ...rest] = argv;
  if (rest.length > 0 || (shell !== 'bash' && shell !== 'zsh')) {
    console.error(
      'Usage: skyhook completion bash|zsh\n\nPrints a completion script: source <(skyhook completion bash).\n' +
        'For `kubectl skyhook`, put bin/kubectl_complete-skyhook on your PATH (kubectl >= 1.26 runs it).',
    );
    return shell === '--help' || shell === '-h' ? 0 : 2;
  }
  process.stdout.write(shell === 'bash' ? BASH : ZSH);
  return 0;
}
