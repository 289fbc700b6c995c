/**
 * Shell completion (`skyhook __complete`, Cobra's protocol that kubectl uses for plugins): commands,
 * subcommands, flags and flag values, and names from the cluster where an argument is a Skyhook or
 * a node, each filtered by the word being completed.
 */
import { describe, expect, it } from '@jest/globals';
import { completeWords } from '../../../src/cli/completion.js';

const COMMANDS = ['status', 'node', 'package', 'pause', 'version', 'completion', '__complete'];
const cluster = async (kind: 'skyhooks' | 'nodes' | 'namespaces'): Promise<string[]> =>
  ({ skyhooks: ['demo', 'drivers'], nodes: ['node-a', 'node-b'], namespaces: ['default', 'skyhook'] })[kind];
const complete = (...words: string[]): Promise<string[]> => completeWords(words, COMMANDS, cluster);

describe('shell completion', () => {
  it('completes the commands, without the hidden __complete', async () => {
    expect(await complete('')).toEqual(['status', 'node', 'package', 'pause', 'version', 'completion']);
    expect(await complete('p')).toEqual(['package', 'pause']);
  });

  it('completes subcommands, then Skyhook and node names from the cluster', async () => {
    expect(await complete('node', '')).toEqual(['list', 'status', 'ignore', 'unignore', 'reset']);
    expect(await complete('node', 'ignore', 'node-')).toEqual(['node-a', 'node-b']);
    expect(await complete('pause', 'd')).toEqual(['demo', 'drivers']);
    expect(await complete('pause', 'demo', '')).toEqual([]);
    expect(await complete('completion', '')).toEqual(['bash', 'zsh']);
  });

  it('completes flags and their values', async () => {
    expect(await complete('status', '--sk')).toEqual(['--skyhook', '--skip-batch-reset']);
    expect(await complete('status', '-o', '')).toEqual(['table', 'wide', 'json', 'yaml', 'name']);
    expect(await complete('package', 'logs', 'motd', '--skyhook', 'dr')).toEqual(['drivers']);
    expect(await complete('node', 'status', '-n', 's')).toEqual(['skyhook']);
    expect(await complete('package', 'rerun', 'x', '--stage', 'post')).toEqual(['post-interrupt']);
  });

  it('does not take a flag value for a positional argument', async () => {
    expect(await complete('-n', 'skyhook', 'node', 'reset', '')).toEqual(['node-a', 'node-b']);
  });
});
