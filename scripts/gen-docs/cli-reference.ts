/**
 * docs/reference/cli.md and the operator flags of docs/reference/settings.md: the `--help` output of
 * every `skyhook` command, run from dist/ (`npm run build`; `npm test` builds it first), so the page
 * is what the installed command prints.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

export function helpOf(repoRoot: string, args: readonly string[]): string {
  const result = spawnSync(process.execPath, [join(repoRoot, 'bin/skyhook.js'), ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
  });
  // Some commands print their usage on stderr; the text is what counts.
  const text = (result.stdout || result.stderr || '').trimEnd();
  if (!text) throw new Error(`skyhook ${args.join(' ')} printed nothing (exit ${result.status}): is dist/ built?`);
  return text;
}

/** Subcommands whose flags are their own (not the command's common ones): each gets a section of its own help. */
const SUBCOMMANDS_WITH_OWN_HELP: Readonly<Record<string, readonly string[]>> = { package: ['verify'] };

/** The commands `skyhook --help` lists, in its order. */
export function commandNames(repoRoot: string): string[] {
  const usage = helpOf(repoRoot, ['--help']);
  const section = usage.slice(usage.indexOf('Commands:'));
  return [...section.matchAll(/^ {2}([a-z][a-z-]*)\s{2,}/gm)].map((match) => match[1]!);
}

export function renderCliPage(repoRoot: string): string {
  const lines = [
    '# Command line: `skyhook` and `kubectl skyhook`',
    '',
    "<!-- Generated from each command's --help by `npm run gen:docs`; do not edit. -->",
    '',
    'One program, `skyhook` (`bin/skyhook.js`), runs the operator, the node agent, the maintenance daemon, ' +
      'the local sandbox and the kubectl plugin; `kubectl skyhook <command>` runs the same plugin commands. ' +
      'Installing the plugin: [kubectl plugin guide](../guides/kubectl-plugin.md).',
    '',
    '```text',
    helpOf(repoRoot, ['--help']),
    '```',
    '',
  ];
  for (const name of commandNames(repoRoot)) {
    if (name === 'dp') continue; // an alias of deployment-policy
    lines.push(`## skyhook ${name}`, '', '```text', helpOf(repoRoot, [name, '--help']), '```', '');
    for (const sub of SUBCOMMANDS_WITH_OWN_HELP[name] ?? []) {
      lines.push(`### skyhook ${name} ${sub}`, '', '```text', helpOf(repoRoot, [name, sub, '--help']), '```', '');
    }
  }
  return `${lines.join('\n').trimEnd()}\n`;
}
