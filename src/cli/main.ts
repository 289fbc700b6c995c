/**
 * The one `skyhook` command. Each subcommand lives in its own module and is imported only when
 * used, so `skyhook agent` on a node never loads the Kubernetes client.
 */
type Command = { summary: string; run: (argv: string[]) => Promise<number> };

const commands: Record<string, Command> = {
  agent: {
    summary: 'run a package stage on this node (the node agent), or validate a package',
    run: async (argv) => (await import('../agent/cli.js')).runAgentCli(argv),
  },
  sandbox: {
    summary:
      'run the whole system locally (control plane, simulated nodes, operator, a demo Skyhook) with live progress',
    run: async (argv) => (await import('./sandbox.js')).runSandboxCli(argv),
  },
  cluster: {
    summary: 'start a local control plane with simulated nodes in the foreground',
    run: async (argv) => (await import('./cluster.js')).runClusterCli(argv),
  },
  images: {
    summary:
      'build the images of real sandbox nodes (skyhook, packages, stand-ins) and push the packages into the sandbox registry; cached',
    run: async (argv) => (await import('./images.js')).runImagesCli(argv),
  },
  operator: {
    summary: 'run the operator (controllers, leader election, health and metrics)',
    run: async (argv) => (await import('./operator.js')).runOperatorCli(argv),
  },
  maintenance: {
    summary:
      'node-initiated maintenance: status [NODE] and release NODE (kubectl plugin); with options only, the node daemon of MaintenancePolicies',
    // `status` and `release` are the plugin's (kubectl skyhook maintenance status); anything else runs the daemon.
    run: async (argv) =>
      argv[0] === 'status' || argv[0] === 'release'
        ? (await import('./plugin/index.js')).runPluginCommand('maintenance', argv)
        : (await import('./maintenance.js')).runMaintenanceCli(argv),
  },
  plan: {
    summary:
      'show what applying a Skyhook would do on this cluster (nodes, stages, batches, blockers); changes nothing',
    run: async (argv) => (await import('./plan.js')).runPlanCli(argv),
  },
  // The kubectl plugin's commands (also `kubectl skyhook <command>`).
  ...pluginCommand('status', 'the Skyhooks and their rollout status'),
  ...pluginCommand('node', 'nodes as Skyhooks see them: list, status, ignore, unignore, reset'),
  ...pluginCommand(
    'package',
    "one package across nodes: status, rerun, logs of its stage Jobs; verify an image's signature",
  ),
  ...pluginCommand('pause', 'pause a Skyhook'),
  ...pluginCommand('resume', 'resume a paused Skyhook'),
  ...pluginCommand('disable', 'disable a Skyhook'),
  ...pluginCommand('enable', 'enable a disabled Skyhook'),
  ...pluginCommand('reset', "remove a Skyhook's state from its nodes and restart its rollout"),
  ...pluginCommand('deployment-policy', "restart a Skyhook's rollout batches (alias: dp)"),
  ...pluginCommand('dp', 'alias of deployment-policy'),
  ...pluginCommand('version', "the client's, the Kubernetes and the operator's versions"),
  completion: {
    summary: 'print a shell completion script: skyhook completion bash|zsh',
    run: async (argv) => (await import('./completion.js')).runCompletionCli(argv),
  },
  __complete: {
    summary: "completion candidates for the words given (Cobra's protocol; kubectl_complete-skyhook runs it)",
    run: async (argv) => (await import('./completion.js')).runCompleteCli(argv, Object.keys(commands)),
  },
};

/** A plugin command, loaded only when run (the summaries are repeated here so `skyhook --help` loads nothing). */
function pluginCommand(name: string, summary: string): Record<string, Command> {
  return { [name]: { summary, run: async (argv) => (await import('./plugin/index.js')).runPluginCommand(name, argv) } };
}

export function usage(): string {
  // `__complete` is for the shells, not for people.
  const shown = Object.entries(commands).filter(([name]) => !name.startsWith('__'));
  const width = Math.max(...shown.map(([name]) => name.length));
  const lines = shown.map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return [
    'Usage: skyhook <command> [options]',
    '',
    'Commands:',
    ...lines,
    '',
    'Run `skyhook <command> --help` for the options of one command.',
  ].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage());
    return name === undefined ? 1 : 0;
  }
  const command = commands[name];
  if (!command) {
    console.error(`skyhook: unknown command '${name}'.\n\n${usage()}`);
    return 2;
  }
  return command.run(rest);
}
