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
  cluster: {
    summary: 'start a local control plane with simulated nodes in the foreground',
    run: async (argv) => (await import('./cluster.js')).runClusterCli(argv),
  },
  operator: {
    summary: 'run the operator (controllers, leader election, health and metrics)',
    run: async (argv) => (await import('./operator.js')).runOperatorCli(argv),
  },
};

export function usage(): string {
  const width = Math.max(...Object.keys(commands).map((name) => name.length));
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return ['Usage: skyhook <command> [options]', '', 'Commands:', ...lines, '', 'Run `skyhook <command> --help` for the options of one command.'].join('\n');
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
