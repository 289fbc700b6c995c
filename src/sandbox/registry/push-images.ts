/**
 * Puts built images into the sandbox registry. The image comes from the docker-archive tarball
 * `npm run images` wrote, imported into buildah's storage first (a tag there may since have been
 * moved by another build); buildah, the project's image tool, then pushes it over the registry
 * protocol with credentials and a CA directory, so no second tool (skopeo, crane) is needed.
 */
import type { Buildah } from '../images/buildah.js';
import type { SandboxRegistry } from './registry.js';
import { registryPath } from './registry-files.js';

/**
 * Pushes the image in docker-archive `archive` as `ref` (e.g. ghcr.io/x/y:1), at ref's path in the
 * registry; by the archive, not a storage tag another build may have moved. Returns where it went.
 */
export async function pushArchive(
  buildah: Buildah,
  registry: SandboxRegistry,
  archive: string,
  ref: string,
): Promise<string> {
  const source = await buildah.importArchive(archive);
  const destination = `${registry.host}/${registryPath(ref)}`;
  const creds = registry.credentials && `${registry.credentials.username}:${registry.credentials.password}`;
  await buildah.pushToRegistry(source, destination, creds, registry.certDir);
  return destination;
}
