/**
 * Every relative link and anchor in the user documentation resolves: README.md, the other root
 * pages, docs/**, chart/README.md and config/samples/README.md. Anchors are checked against the
 * headings of the target page as GitHub makes them (lower case, punctuation dropped, spaces to `-`).
 * docs/README.md, the index, reaches every page of docs/.
 */
import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function markdownUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(dir, name));
}

const ROOT_PAGES = ['README.md', 'CONTRIBUTING.md', 'SECURITY.md', 'CHANGELOG.md'];
const PAGES = [...ROOT_PAGES, 'chart/README.md', 'config/samples/README.md', ...markdownUnder('docs')];

/** Markdown without its fenced code blocks and inline code, where a `[x](y)` is not a link. */
function prose(text: string): string {
  return text.replace(/^(```|~~~)[\s\S]*?^\1/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's heading anchors of a page (duplicates get -1, -2, …). */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const match of prose(text).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = match[1]!
      .replace(/<[^>]+>/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

function linksOf(text: string): string[] {
  return [...prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1]!);
}

describe('links in the documentation', () => {
  it.each(PAGES)('%s: every relative link and anchor resolves', (page) => {
    const text = readFileSync(join(ROOT, page), 'utf8');
    const broken: string[] = [];
    for (const link of linksOf(text)) {
      if (/^[a-z]+:/i.test(link)) continue; // http(s), mailto
      const [path, anchor] = link.split('#') as [string, string | undefined];
      const target = path === '' ? page : normalize(join(dirname(page), decodeURIComponent(path)));
      if (!existsSync(join(ROOT, target))) {
        broken.push(`${link} (no ${target})`);
        continue;
      }
      if (anchor === undefined || statSync(join(ROOT, target)).isDirectory()) continue;
      if (!target.endsWith('.md')) continue;
      if (!anchorsOf(readFileSync(join(ROOT, target), 'utf8')).has(anchor))
        broken.push(`${link} (no heading #${anchor} in ${target})`);
    }
    expect(broken).toEqual([]);
  });

  it('docs/README.md links every page under docs/', () => {
    const index = readFileSync(join(ROOT, 'docs/README.md'), 'utf8');
    const linked = new Set(linksOf(index).map((link) => normalize(join('docs', link.split('#')[0]!))));
    const unlinked = markdownUnder('docs').filter((page) => page !== 'docs/README.md' && !linked.has(page));
    expect(unlinked).toEqual([]);
  });

  it('config/samples/README.md lists every sample', () => {
    const index = readFileSync(join(ROOT, 'config/samples/README.md'), 'utf8');
    const samples = readdirSync(join(ROOT, 'config/samples'), { recursive: true, encoding: 'utf8' }).filter((name) =>
      name.endsWith('.yaml'),
    );
    expect(samples.filter((sample) => !linksOf(index).includes(sample))).toEqual([]);
  });

  it('README.md links the docs index', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain('(docs/README.md)');
  });

  it('finds links and anchors as GitHub does (the checker itself)', () => {
    expect(anchorsOf('# Install on a cluster\n## The image\n## The image\n```\n# not a heading\n```')).toEqual(
      new Set(['install-on-a-cluster', 'the-image', 'the-image-1']),
    );
    expect(linksOf('see [a](b.md#c) and `[x](y)`')).toEqual(['b.md#c']);
    expect(relative(ROOT, join(ROOT, 'docs'))).toBe('docs');
  });
});
