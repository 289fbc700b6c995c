/**
 * Proof that the checks `npm test` runs (`npm run lint`: Biome, then dependency-cruiser) catch each
 * violation the architecture issue names: an import cycle, an upward import, an I/O import from the
 * Skyhook planner, a lint error, an unformatted file, a file over 300 lines and a function over 80.
 * Each case is a tiny `src/` tree in a temporary directory (never the repository's own src/), checked
 * with the repository's own .dependency-cruiser.cjs and biome.jsonc, so a rule weakened there fails
 * here. A clean tiny tree and the real tree pass.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const REPO = resolve(import.meta.dirname, '../../..');
const DEPCRUISE = join(REPO, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs');
const BIOME = join(REPO, 'node_modules/@biomejs/biome/bin/biome');
/** dependency-cruiser needs Node >= 22: this process's node when it is, else the project's own (devDependency `node`). */
const NODE_22 =
  Number(process.versions.node.split('.')[0]) >= 22 ? process.execPath : join(REPO, 'node_modules/node/bin/node');

interface Run {
  code: number | null;
  output: string;
}

let root: string;
let trees = 0;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'skyhook-lint-rules-'));
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/** Writes the files (paths relative to the tree) into a fresh directory; returns it. */
function tree(files: Record<string, string>): string {
  const dir = join(root, `tree-${trees++}`);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

function run(command: string, args: string[], cwd: string): Run {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 60_000 });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

/** As `npm run lint` runs it, with the repository's rules. */
function depcruise(dir: string): Run {
  return run(
    NODE_22,
    [DEPCRUISE, '--config', join(REPO, '.dependency-cruiser.cjs'), '--output-type', 'err', 'src'],
    dir,
  );
}

/**
 * As `npm run lint` runs it, with the repository's biome.jsonc. The tiny tree is no git checkout:
 * the config's "use .gitignore" is switched off here (it has nothing to ignore in the tree anyway).
 */
function biome(dir: string): Run {
  const config = join(REPO, 'biome.jsonc');
  return run(
    process.execPath,
    [BIOME, 'check', '--config-path', config, '--vcs-enabled=false', '--error-on-warnings', '--reporter=github', 'src'],
    dir,
  );
}

/** A tree the layers allow: util ← api ← kube, and a planner that imports only api/ and util/. */
const CLEAN: Record<string, string> = {
  'src/util/clamp.ts': 'export function clamp(n: number, max: number): number {\n  return Math.min(n, max);\n}\n',
  'src/api/budget.ts':
    "import { clamp } from '../util/clamp.js';\n\nexport const budget = (n: number): number => clamp(n, 3);\n",
  'src/kube/client.ts':
    "import { budget } from '../api/budget.js';\n\nexport const readBudget = (): number => budget(5);\n",
  'src/controllers/skyhook/plan/planner.ts':
    "import { budget } from '../../../api/budget.js';\nimport { clamp } from '../../../util/clamp.js';\n\nexport const plan = (n: number): number => clamp(budget(n), 2);\n",
};

/** `lines` statements, one per line: a function body of a known length. */
const statements = (lines: number): string => Array.from({ length: lines }, (_, i) => `  total += ${i};\n`).join('');

describe('npm test', () => {
  it('runs npm run lint, which runs the two checks below as they are run here', () => {
    const { scripts } = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(scripts['test']).toContain('npm run typecheck && npm run lint &&');
    expect(scripts['lint']).toBe(
      'biome check --error-on-warnings . && depcruise --config .dependency-cruiser.cjs --output-type err src',
    );
  });
});

describe('the architecture rules (dependency-cruiser, .dependency-cruiser.cjs)', () => {
  it('pass a clean tree', () => {
    const result = depcruise(tree(CLEAN));
    expect(result.output).toContain('no dependency violations found');
    expect(result.code).toBe(0);
  });

  it.each([
    [
      'an import cycle',
      {
        'src/util/a.ts': "import { b } from './b.js';\n\nexport const a = (): number => b() + 1;\n",
        'src/util/b.ts': "import { a } from './a.js';\n\nexport const b = (): number => a() - 1;\n",
      },
      ['no-circular'],
    ],
    [
      'an upward import (kube/ importing controllers/)',
      {
        'src/controllers/registry.ts': 'export const controllers: string[] = [];\n',
        'src/kube/manager.ts':
          "import { controllers } from '../controllers/registry.js';\n\nexport const count = controllers.length;\n",
      },
      ['layer-kube'],
    ],
    [
      'signing/ importing the cluster client (kube/)',
      {
        'src/kube/client.ts': 'export const readNode = (name: string): string => name;\n',
        'src/signing/verify.ts':
          "import { readNode } from '../kube/client.js';\n\nexport const verify = (): string => readNode('n');\n",
      },
      ['layer-signing'],
    ],
    [
      'an I/O import from the planner (node:fs and kube/client)',
      {
        'src/kube/client.ts': 'export const readNode = (name: string): string => name;\n',
        'src/controllers/skyhook/plan/planner.ts':
          "import { readFileSync } from 'node:fs';\nimport { readNode } from '../../../kube/client.js';\n\nexport const plan = (): string => readNode(readFileSync('/x', 'utf8'));\n",
      },
      ['planner-no-node-builtins', 'planner-is-pure'],
    ],
    [
      'an I/O import from the cluster budget rules the planner imports',
      {
        'src/kube/client.ts': 'export const readNode = (name: string): string => name;\n',
        'src/controllers/disruption/budget-rules.ts':
          "import { readNode } from '../../kube/client.js';\n\nexport const rules = (): string => readNode('n');\n",
      },
      ['budget-rules-are-pure'],
    ],
  ])('fail %s', (_what, files, rules) => {
    const result = depcruise(tree({ ...CLEAN, ...files }));
    expect(result.code).not.toBe(0);
    for (const rule of rules) expect(result.output).toContain(`error ${rule}:`);
  });

  it('pass the real tree', () => {
    const result = depcruise(REPO);
    expect(result.output).toContain('no dependency violations found');
    expect(result.code).toBe(0);
  });
});

describe('the format and lint rules (Biome, biome.jsonc)', () => {
  it('pass a clean tree', () => {
    const result = biome(tree(CLEAN));
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  });

  it.each([
    [
      'a lint error',
      { 'src/util/stop.ts': 'export function stop(): void {\n  debugger;\n}\n' },
      'lint/suspicious/noDebugger',
    ],
    [
      'an `any`',
      { 'src/util/loose.ts': 'export const loose = (x: any): string => String(x);\n' },
      'lint/suspicious/noExplicitAny',
    ],
    ['an unformatted file', { 'src/util/spaced.ts': 'export const spaced   =  1 ;\n' }, 'format'],
    [
      'a file over 300 lines',
      { 'src/util/long-file.ts': Array.from({ length: 301 }, (_, i) => `export const v${i} = ${i};\n`).join('') },
      'lint/style/noExcessiveLinesPerFile',
    ],
    [
      'a function over 80 lines',
      {
        'src/util/long-function.ts': `export function sum(): number {\n  let total = 0;\n${statements(80)}  return total;\n}\n`,
      },
      'lint/complexity/noExcessiveLinesPerFunction',
    ],
  ])('fail %s', (_what, files, rule) => {
    const result = biome(tree({ ...CLEAN, ...files }));
    expect(result.code).not.toBe(0);
    expect(result.output).toContain(`title=${rule},`);
  });
});
