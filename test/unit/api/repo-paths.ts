/** Paths the API tests read: the repository and the shared examples beside it (as in CI). */
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const CONFIG_DIR = join(REPO_ROOT, 'config');
export const SHARED_EXAMPLES_DIR = join(REPO_ROOT, '../shared/examples');
export const README_DEMO = join(SHARED_EXAMPLES_DIR, 'skyhook-readme-demo.yaml');
