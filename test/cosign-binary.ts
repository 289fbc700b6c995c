/**
 * Where the tests find cosign: $SKYHOOK_COSIGN_BIN when set, else the cache `npm run cluster:build`
 * fills (tools/build-cosign.sh builds github.com/sigstore/cosign/v3 at tools/versions.env's
 * COSIGN_VERSION into <cache>/bin/cosign-<version>/cosign). Lives in test/: only the tests sign.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot } from '../src/sandbox/binaries.js';
import { REPO_ROOT } from './helm-binary.js';

export function cosignVersion(): string {
  const match = /^COSIGN_VERSION=(\S+)$/m.exec(readFileSync(join(REPO_ROOT, 'tools/versions.env'), 'utf8'));
  if (!match) throw new Error('tools/versions.env does not define COSIGN_VERSION');
  return match[1]!;
}

export function findCosign(env: NodeJS.ProcessEnv = process.env): string {
  const path = env['SKYHOOK_COSIGN_BIN'] || join(cacheRoot(env), 'bin', `cosign-${cosignVersion()}`, 'cosign');
  try {
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    throw new Error(`cosign not found at ${path}: run \`npm run cluster:build\` (builds it from its Go module)`);
  }
}

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
