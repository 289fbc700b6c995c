/**
 * docs/maintenance.md stays true to what it documents: README links it, its script excerpt is the
 * example script's protocol lines, and every queue reason it lists is one the code gives.
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { BLOCKER_REASONS } from '../../../src/controllers/maintenance/blockers.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const read = (path: string): string => readFileSync(`${ROOT}${path}`, 'utf8');

describe('docs/maintenance.md', () => {
  const doc = read('docs/maintenance.md');

  it('is linked from README, and links the example script', () => {
    expect(read('README.md')).toContain('(docs/maintenance.md)');
    expect(doc).toContain('(examples/maintenance.sh)');
  });

  it("shows the example script's protocol lines as they are in docs/examples/maintenance.sh", () => {
    const script = read('docs/examples/maintenance.sh');
    for (const line of [
      'set -eu',
      'REQUIRED=/var/maintenance-required',
      'IN_PROGRESS=/var/maintenance-in-progress',
      'touch "$REQUIRED"',
      'while [ ! -e "$IN_PROGRESS" ]; do sleep 1; done',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a line of shell, not a template
      'sleep "${MAINTENANCE_WORK_SECONDS:-5}"',
      'rm -f "$REQUIRED"',
    ]) {
      expect(script).toContain(`\n${line}\n`);
      expect(doc).toContain(`\n${line}\n`);
    }
  });

  it('names the blockers by the reasons the controller shows', () => {
    for (const reason of Object.values(BLOCKER_REASONS)) expect(doc).toContain(`\`${reason}\``);
  });
});
