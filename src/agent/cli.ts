/** `skyhook agent …`: run a stage on this node, validate a package, or print the package schema. */
import { runAgent } from './agent.js';
import { packageConfigSchemaJson } from './config-schema.js';
import { ALL_MODES } from './modes.js';
import { AGENT_ENV_DOC } from './settings.js';
import { formatValidationReport, validatePackage } from './validate.js';

export function agentUsage(): string {
  const width = Math.max(...AGENT_ENV_DOC.map(([name]) => name.length));
  return [
    'Usage:',
    '  skyhook agent <mode> <rootMount> <copyDir> [interruptBase64]   run a stage chrooted into rootMount',
    '  skyhook agent validate <package dir | config.json>             check a package, report every problem',
    '  skyhook agent schema                                           print the config.json JSON schema (v1)',
    '',
    `Modes: ${ALL_MODES.join(', ')}`,
    '',
    'Environment (default):',
    ...AGENT_ENV_DOC.map(
      ([name, value, meaning]) => `  ${name.padEnd(width)}  (${value === '' ? 'empty' : value}) ${meaning}`,
    ),
  ].join('\n');
}

export async function runAgentCli(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    console.log(agentUsage());
    return first === undefined ? 1 : 0;
  }
  if (first === 'schema') {
    process.stdout.write(packageConfigSchemaJson());
    return 0;
  }
  if (first === 'validate') {
    if (rest.length !== 1 || rest[0] === undefined) {
      console.error('Usage: skyhook agent validate <package dir | config.json>');
      return 1;
    }
    const { text, ok, warnings } = formatValidationReport(validatePackage(rest[0]));
    if (warnings !== '') console.error(warnings);
    (ok ? console.log : console.error)(text);
    return ok ? 0 : 1;
  }
  return runAgent(argv);
}
