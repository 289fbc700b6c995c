/**
 * User pages stay readable and current: the README fits in five minutes of reading, and neither it
 * nor the pages under docs/ (design notes and benchmarks apart, which keep history on purpose) cite
 * tracker issues, commit hashes or test-run diaries. Figures have one home: the benchmark figures
 * live in docs/design/benchmarks.md only.
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const README_MAX_WORDS = 1500;

const USER_PAGES = [
  'README.md',
  'CONTRIBUTING.md',
  'SECURITY.md',
  'chart/README.md',
  'config/samples/README.md',
  ...readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md') && !name.startsWith('design/'))
    .map((name) => `docs/${name}`),
];

/** What internal history looks like; each pattern says what it catches. */
const HISTORY: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bissues?\s+#?\d+/i, 'a tracker issue ("issue 18")'],
  [/(^|[\s(])#\d{1,5}\b/, 'an issue or pull request number ("#18")'],
  [
    /\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth)\s+pass\b/i,
    'a benchmark "pass"',
  ],
  [/\bthis (session|branch)\b|\bshared machine\b|\bthe morning\b|\bearlier run today\b/i, 'a run diary'],
  // A DNS label such as the leader Lease `3c22c1ae.nvidia.com` is a name, not a commit.
  [/\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b(?!\.[a-z])/, 'a commit hash'],
];

function words(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

describe('user documentation', () => {
  it(`README.md is at most ${README_MAX_WORDS} words`, () => {
    expect(words(readFileSync(join(ROOT, 'README.md'), 'utf8'))).toBeLessThanOrEqual(README_MAX_WORDS);
  });

  it('README.md gives the two commands, and CI runs exactly its test command', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain('```sh\nnpm ci && npm start\n```');
    expect(readme).toContain('```sh\nnpm ci && npm test\n```');
    expect(readFileSync(join(ROOT, '.ci/run'), 'utf8')).toMatch(/^npm ci && npm test$/m);
  });

  it('npm start builds what the README says it builds (the control plane), not helm, which only the tests use', () => {
    const scripts = (
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    expect(scripts['start']).toContain('tools/build-control-plane.sh');
    expect(scripts['start']).not.toMatch(/build-helm|cluster:build/);
    expect(scripts['test']).toContain('npm run cluster:build');
    expect(scripts['cluster:build']).toContain('tools/build-helm.sh');
  });

  it.each(USER_PAGES)('%s cites no issues, commits or run diaries', (page) => {
    const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
    const found: string[] = [];
    lines.forEach((line, index) => {
      for (const [pattern, what] of HISTORY)
        if (pattern.test(line)) found.push(`${page}:${index + 1}: ${what}: ${line.trim().slice(0, 120)}`);
    });
    expect(found).toEqual([]);
  });

  it('catches what it is meant to catch (the patterns themselves)', () => {
    const caught = (line: string) => HISTORY.some(([pattern]) => pattern.test(line));
    for (const bad of ['Scale (issue 18)', 'fixed in #42', 'the ninth pass', 'on the shared machine', 'commit e19ac6c'])
      expect(caught(bad)).toBe(true);
    for (const good of [
      'passes the gate',
      'Kubernetes 1.34',
      'color #fff',
      'a 1000-node rollout',
      'lease 3c22c1ae.nvidia.com',
    ])
      expect(caught(good)).toBe(false);
  });

  it('gives benchmark figures only in docs/design/benchmarks.md (one source per figure)', () => {
    const figure = /\b(writes per node-stage|wall \/ ideal|× the ideal)\b/i;
    const elsewhere = USER_PAGES.filter((page) => figure.test(readFileSync(join(ROOT, page), 'utf8')));
    expect(elsewhere).toEqual([]);
  });
});
