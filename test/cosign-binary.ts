/**
 * Where the tests find cosign: $SKYHOOK_COSIGN_BIN when set, else the cache `npm run cluster:build`
 * fills (tools/build-cosign.sh builds github.com/sigstore/cosign/v3 at tools/versions.env's
 * COSIGN_VERSION into <cache>/bin/cosign-<version>/cosign). Lives in test/: only the tests sign.
 */
import { execFile } from 'node:child_process';
import { findCachedTool, pinnedVersion } from './cached-tool.js';

const COSIGN = { name: 'cosign', versionVariable: 'COSIGN_VERSION', overrideVariable: 'SKYHOOK_COSIGN_BIN' };

export const cosignVersion = (): string => pinnedVersion(COSIGN.versionVariable);

export const findCosign = (env: NodeJS.ProcessEnv = process.env): string => findCachedTool(COSIGN, env);

export interface CosignResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** cosign with `env` added (COSIGN_PASSWORD, DOCKER_CONFIG, ...), in `cwd`. */
export function runCosign(args: string[], env: Record<string, string>, cwd: string): Promise<CosignResult> {
  return new Promise((resolve) => {
    execFile(
      findCosign(),
      args,
      { cwd, env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024, timeout: 120_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** cosign, failing with its output unless it exits 0. */
export async function cosignOk(args: string[], env: Record<string, string>, cwd: string): Promise<string> {
  const result = await runCosign(args, env, cwd);
  if (result.code !== 0)
    throw new Error(`cosign ${args.join(' ')} failed (${result.code}):\n${result.stderr}\n${result.stdout}`);
  return result.stdout;
}

/**
 * `cosign sign` flags that keep cosign 3 on its classic `.sig` tag format, offline (no transparency
 * log, no signing config): the format the operator verifies.
 */
export const CLASSIC_FORMAT = ['--new-bundle-format=false', '--use-signing-config=false', '--tlog-upload=false'];
