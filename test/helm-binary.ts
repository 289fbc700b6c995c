/**
 * Where the tests find helm: $HELM when set, else the cache `npm run cluster:build` fills
 * (tools/build-helm.sh builds helm.sh/helm/v4 at tools/versions.env's HELM_VERSION into
 * <cache>/bin/helm-<version>/helm). Lives in test/ because only the tests and the README use helm.
 */
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findCachedTool, pinnedVersion, REPO_ROOT } from './cached-tool.js';

export { REPO_ROOT };
export const CHART_DIR = join(REPO_ROOT, 'chart');

const HELM = { name: 'helm', versionVariable: 'HELM_VERSION', overrideVariable: 'HELM' };

export const helmVersion = (): string => pinnedVersion(HELM.versionVariable);

export const findHelm = (env: NodeJS.ProcessEnv = process.env): string => findCachedTool(HELM, env);

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs helm with its own config/cache dirs under `home` (no state shared with a user's helm). */
export function runHelm(args: string[], options: { kubeconfig?: string; home?: string } = {}): Promise<HelmResult> {
  const home = options.home ?? join(tmpdir(), 'skyhook-ts-helm-home');
  const env = {
    ...process.env,
    HELM_CONFIG_HOME: join(home, 'config'),
    HELM_CACHE_HOME: join(home, 'cache'),
    HELM_DATA_HOME: join(home, 'data'),
    ...(options.kubeconfig ? { KUBECONFIG: options.kubeconfig } : {}),
  };
  return new Promise((resolve) => {
    execFile(findHelm(), args, { env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** helm, failing with its stderr unless it exits 0. */
export async function helmOk(args: string[], options: { kubeconfig?: string; home?: string } = {}): Promise<string> {
  const result = await runHelm(args, options);
  if (result.code !== 0) throw new Error(`helm ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}
