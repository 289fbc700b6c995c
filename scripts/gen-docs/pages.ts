/**
 * Every page `npm run gen:docs` writes, as path (from the repository root) → content. The docs test
 * compares each with the file on disk, so a page that drifts from its source fails `npm test`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RESOURCE_DEFINITIONS } from '../../src/api/definitions.js';
import { API_GROUP, API_VERSION } from '../../src/api/names.js';
import { withValuesTable } from './chart-values.js';
import { renderCliPage } from './cli-reference.js';
import { crdPageName, renderCrdPage } from './crd-reference.js';
import { renderMetricsPage } from './metrics-reference.js';
import { renderNamesPage } from './names-reference.js';
import { renderSettingsPage } from './settings-reference.js';

export function generatedPages(repoRoot: string): Map<string, string> {
  const pages = new Map<string, string>();
  for (const def of RESOURCE_DEFINITIONS) pages.set(crdPageName(def), renderCrdPage(def, API_GROUP, API_VERSION));
  pages.set('docs/reference/names.md', renderNamesPage(repoRoot));
  pages.set('docs/reference/metrics.md', renderMetricsPage());
  pages.set('docs/reference/settings.md', renderSettingsPage(repoRoot));
  pages.set('docs/reference/cli.md', renderCliPage(repoRoot));
  const chartReadme = readFileSync(join(repoRoot, 'chart/README.md'), 'utf8');
  pages.set('chart/README.md', withValuesTable(chartReadme, repoRoot));
  return pages;
}
