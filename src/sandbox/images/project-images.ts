/**
 * The project's own images, built from its Dockerfiles unchanged: the skyhook image (operator +
 * agent) from ./Dockerfile and the shellscript package from packages/shellscript. What the
 * Dockerfiles cannot know about this machine is given as build-time mounts, not edits: the CA
 * bundle this machine trusts (egress TLS may be intercepted, and `npm ci` in RUN then fails with
 * SELF_SIGNED_CERT_IN_CHAIN) and the npm registry it uses, through npm's global npmrc.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Buildah } from './buildah.js';
import { IMAGE_REFS } from './image-refs.js';
import { runCommand } from './run-command.js';

const SYSTEM_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';
/** A neutral path: the Dockerfile's second stage installs ca-certificates over the usual one. */
const BUILD_CA_PATH = '/run/build-ca.crt';
/** npm's global config in the node image ($PREFIX/etc/npmrc, prefix /usr/local). */
const GLOBAL_NPMRC_PATH = '/usr/local/etc/npmrc';

/** Writes the CA bundle and npmrc for RUN steps into `scratchDir`; returns the `-v` mounts. */
async function buildTimeMounts(scratchDir: string): Promise<string[]> {
  const bundles = [SYSTEM_CA_BUNDLE, process.env['NODE_EXTRA_CA_CERTS']].filter(
    (file): file is string => !!file && existsSync(file),
  );
  if (bundles.length === 0)
    throw new Error(`no CA bundle at ${SYSTEM_CA_BUNDLE}: install ca-certificates (apt-get install ca-certificates)`);
  const caFile = join(scratchDir, 'build-ca.crt');
  writeFileSync(caFile, bundles.map((file) => readFileSync(file, 'utf8')).join('\n'));
  const registry = (await runCommand('npm', ['config', 'get', 'registry'])).trim() || 'https://registry.npmjs.org/';
  const npmrc = join(scratchDir, 'npmrc');
  writeFileSync(npmrc, `cafile=${BUILD_CA_PATH}\nregistry=${registry}\n`);
  return [`${caFile}:${BUILD_CA_PATH}:ro`, `${npmrc}:${GLOBAL_NPMRC_PATH}:ro`];
}

/** Returns the image ID. */
export async function buildSkyhookImage(buildah: Buildah, repoRoot: string, scratchDir: string): Promise<string> {
  return buildah.bud({
    scratchDir,
    contextDir: repoRoot,
    dockerfile: join(repoRoot, 'Dockerfile'),
    tags: [IMAGE_REFS.skyhook],
    volumes: await buildTimeMounts(scratchDir),
  });
}

/** Returns the image ID. */
export async function buildShellscriptImage(buildah: Buildah, repoRoot: string, scratchDir: string): Promise<string> {
  const contextDir = join(repoRoot, 'packages/shellscript');
  return buildah.bud({
    scratchDir,
    contextDir,
    dockerfile: join(contextDir, 'Dockerfile'),
    tags: [IMAGE_REFS.shellscript, IMAGE_REFS.shellscriptUpstream],
  });
}
